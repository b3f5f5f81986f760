"""Fused and coalesced, but a grid of 8 programs that each loop over an eighth of the tensor: 8 of
the GPU's 132 SMs do all the work."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_persistent(x_ptr, b_ptr, out_ptr, n_elements, N, per_program, BLOCK: tl.constexpr):
    start = tl.program_id(0) * per_program
    for off in range(0, per_program, BLOCK):
        offs = start + off + tl.arange(0, BLOCK)
        mask = (offs < n_elements) & (off + tl.arange(0, BLOCK) < per_program)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
        v = x + b
        tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        per_program = triton.cdiv(triton.cdiv(n, 8), 1024) * 1024
        gelu_bias_persistent[(8,)](x, bias, out, n, x.shape[-1], per_program, BLOCK=1024)
        return out
