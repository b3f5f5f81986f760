"""Fused and coalesced, but 16384 elements per 4-warp program: 128 values of each tensor per thread,
more than 255 registers hold, so the sm_90 compile spills to local memory (a few hundred bytes per
thread, 192-416 with triton 3.6 depending on the shape's alignment)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_kernel(x_ptr, b_ptr, out_ptr, n_elements, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
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
        BLOCK = 16384
        gelu_bias_kernel[(triton.cdiv(n, BLOCK),)](x, bias, out, n, x.shape[-1], BLOCK=BLOCK, num_warps=4)
        return out
