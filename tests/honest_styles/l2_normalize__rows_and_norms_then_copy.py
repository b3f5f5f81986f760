"""Honest two-kernel l2 normalize: kernel 1 stores the normalized rows and each row's norm (two outputs of
different strides, as a layernorm forward stores y and its statistics); kernel 2 copies the rows into out."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def norm_rows(x_ptr, y_ptr, norm_ptr, M, N, stride_row, eps, BLOCK_N: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + r * stride_row + cols, mask=mask, other=0.0)
    norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), eps)
    tl.store(y_ptr + r * stride_row + cols, x / norm, mask=mask)
    tl.store(norm_ptr + r, norm)


@triton.jit
def copy_rows(y_ptr, out_ptr, N, stride_row, BLOCK_N: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    tl.store(out_ptr + r * stride_row + cols, tl.load(y_ptr + r * stride_row + cols, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        norms = torch.empty(M, dtype=x.dtype, device=x.device)
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        norm_rows[(M,)](x, y, norms, M, N, x.stride(0), 1e-12, BLOCK_N=BLOCK_N)
        copy_rows[(M,)](y, out, N, x.stride(0), BLOCK_N=BLOCK_N)
        return out
