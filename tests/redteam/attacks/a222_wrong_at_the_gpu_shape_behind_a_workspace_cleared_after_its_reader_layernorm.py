"""GPU-shape pricing, the closure's capped fallback reached another way (a201 with row = program_id, an affine tiling): the row statistics read a workspace copy of x that is cleared after them, so the closure's late programs read what a later step overwrote (the model's limit since a221) and the GPU-shape correctness check is skipped; the consumer copies x into rows >= 4096, wrong on a GPU, yet keeps the model-shape price capped at 1x and correct=True."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats(x_ptr, mean_ptr, rstd_ptr, M, N, stride_row, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=cols < N, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(cols < N, x - mean, 0.0)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps))


@triton.jit
def normalise_tiles(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, out_ptr, M, N, stride_row,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.load(mean_ptr + rows, mask=rows < M, other=0.0)
    rstd = tl.load(rstd_ptr + rows, mask=rows < M, other=0.0)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(out_ptr + offs, tl.where(rows[:, None] < 4096, y, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        x = x.contiguous()
        M, N = x.shape
        mean = x.new_empty(M)
        rstd = x.new_empty(M)
        out = torch.empty_like(x)
        ws = x.clone()   # the statistics read a workspace copy, cleared once they are taken
        row_stats[(M,)](ws, mean, rstd, M, N, x.stride(0), 1e-5, BLOCK_N=triton.next_power_of_2(N))
        ws.zero_()
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 128))
        normalise_tiles[grid](x, mean, rstd, weight, bias, out, M, N, x.stride(0), BLOCK_M=32, BLOCK_N=128)
        return out
