"""Wrong: exponentiates the logits without subtracting the row max, so exp overflows to inf (and the row to NaN) once logits pass ~88."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, M, N, stride_row,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x)  # one reduction fewer than exp(x - max)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, min(16, 4096 // BLOCK_N))
        softmax_kernel[(triton.cdiv(M, BLOCK_M),)](x, out, M, N, x.stride(0),
                                                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
