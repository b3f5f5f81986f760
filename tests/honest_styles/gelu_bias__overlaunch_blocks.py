"""GELU(x + bias) over flat blocks of 1024 elements on a grid rounded up to a multiple of 132 programs: those past
the last block return at once (an over-launched line grid whose idle tail the sampler bisects to its first program)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_blocks(x_ptr, b_ptr, out_ptr, numel, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= tl.cdiv(numel, BLOCK):
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
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
        BLOCK = 1024
        blocks = triton.cdiv(x.numel(), BLOCK)
        gelu_bias_blocks[(triton.cdiv(blocks, 132) * 132,)](x, bias, out, x.numel(), x.shape[1], BLOCK=BLOCK,
                                                             num_warps=4)
        return out
