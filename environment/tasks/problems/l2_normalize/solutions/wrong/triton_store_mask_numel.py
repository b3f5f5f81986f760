"""Wrong: the store is bounded by numel instead of the row, so each row's padded lanes spill zeros into the next row; in pid order the next program overwrites them, on a GPU it may run first."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(x_ptr, out_ptr, M, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    offs = row * N + cols
    x = tl.load(x_ptr + offs, mask=cols < N, other=0.0)
    norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), eps)
    tl.store(out_ptr + offs, x / norm, mask=offs < M * N)  # bounds check on the whole tensor


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        l2_normalize_kernel[(M,)](x, out, M, N, 1e-12, BLOCK_N=triton.next_power_of_2(N))
        return out
