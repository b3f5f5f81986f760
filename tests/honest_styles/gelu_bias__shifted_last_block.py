"""GELU(x + bias) over flat 1-D blocks of 2048 elements, unmasked: the last block is shifted back to end at
the last element, so it re-computes and re-stores part of its neighbour's block with identical values."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_shifted(x_ptr, b_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    start = tl.minimum(tl.program_id(0) * BLOCK, n - BLOCK)
    offs = start + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    b = tl.load(b_ptr + offs % N)
    v = x + b
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 2048
        while BLOCK > n:
            BLOCK //= 2
        gelu_bias_shifted[(triton.cdiv(n, BLOCK),)](x, bias.contiguous(), out, n, N, BLOCK=BLOCK, num_warps=8)
        return out
