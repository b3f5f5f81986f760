"""Wrong: walks each row in 128-wide chunks and normalizes every chunk by its own norm, not the row's."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(x_ptr, out_ptr, N, stride_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0)
        norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), eps)
        tl.store(out_ptr + row * stride_row + cols, x / norm, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        l2_normalize_kernel[(M,)](x, out, N, x.stride(0), 1e-12, BLOCK=128)
        return out
