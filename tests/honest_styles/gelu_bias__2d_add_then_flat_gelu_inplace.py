"""Honest two-pass gelu(x + bias): a 2-D tiled add of the bias, then a flat GELU over the result in place."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_bias_2d(x_ptr, b_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], x + b[None, :], mask=mask)


@triton.jit
def gelu_flat_inplace(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        add_bias_2d[(triton.cdiv(M, 32), triton.cdiv(N, 128))](x, bias, out, M, N, x.stride(0), BLOCK_M=32, BLOCK_N=128)
        n = out.numel()
        gelu_flat_inplace[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        return out
