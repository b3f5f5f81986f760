"""LayerNorm with a one-pass shifted variance: each row is shifted by its own first element before the sums
(var = E[(x-K)^2] - E[x-K]^2 with K = x[0], the textbook stable shifted-data algorithm), so rows whose mean sits
far from zero do not cancel; fp32 throughout, a block of whole rows per program, x read once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_shifted(x_ptr, w_ptr, b_ptr, out_ptr, M, N, stride_row, eps,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows.to(tl.int64)[:, None] * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    shift = tl.load(x_ptr + rows.to(tl.int64) * stride_row, mask=rows < M, other=0.0)
    d = tl.where(mask, x - shift[:, None], 0.0)
    mean_d = tl.sum(d, axis=1) / N
    var = tl.maximum(tl.sum(d * d, axis=1) / N - mean_d * mean_d, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y = (d - mean_d[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, min(8, 4096 // BLOCK_N))
        layernorm_shifted[(triton.cdiv(M, BLOCK_M),)](x, weight.contiguous(), bias.contiguous(), out, M, N,
                                                      x.stride(0), 1e-5, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
