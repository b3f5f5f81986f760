"""Two passes over x in two launches with the same grid: the inverse RMS of each row into a small
buffer, then a second read of x to normalize (the one-pass kernel reads x once)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def inv_rms_kernel(x_ptr, r_ptr, N, stride_row, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_row + cols, mask=cols < N, other=0.0)
        acc += x * x
    tl.store(r_ptr + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps))


@triton.jit
def scale_kernel(x_ptr, r_ptr, w_ptr, out_ptr, N, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    r = tl.load(r_ptr + row)
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride_row + cols, x * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        inv = torch.empty((M,), dtype=x.dtype, device=x.device)
        inv_rms_kernel[(M,)](x, inv, N, x.stride(0), 1e-6, BLOCK_N=1024)
        scale_kernel[(M,)](x, inv, weight.contiguous(), out, N, x.stride(0), BLOCK_N=1024)
        return out
