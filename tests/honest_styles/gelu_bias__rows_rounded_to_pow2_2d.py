"""Honest 2-D tiled gelu(x + bias): the row-block axis of the grid is rounded up to a power of two (so the
grid is the same for a range of sizes, one cached launch config); row blocks past the last return at once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_SMS = 132


@triton.jit
def gelu_bias_2d(x_ptr, b_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BLOCK_M >= M:
        return
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    v = x + b[None, :]
    y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_M, BLOCK_N = 64, 128
        row_blocks = triton.next_power_of_2(triton.cdiv(M, BLOCK_M))
        gelu_bias_2d[(row_blocks, triton.cdiv(N, BLOCK_N))](x, bias, out, M, N, x.stride(0),
                                                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
