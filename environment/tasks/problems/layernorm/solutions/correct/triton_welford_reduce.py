"""Welford one-pass LayerNorm: BLOCK_M rows x the whole row per program; mean and M2 merged with a custom
tl.reduce combine (Chan et al.), so x is read once and no E[x^2] - E[x]^2 cancellation."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    safe = tl.where(n == 0.0, 1.0, n)
    delta = mean_b - mean_a
    frac = n_b / safe
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def layernorm_welford(x_ptr, w_ptr, b_ptr, out_ptr, M, N, stride_row, eps,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    count = tl.where(mask, 1.0, 0.0)
    m2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    mean, m2, _ = tl.reduce((x, m2, count), 1, welford_combine)
    rstd = 1.0 / tl.sqrt(m2 / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
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
        layernorm_welford[(triton.cdiv(M, BLOCK_M),)](x, weight, bias, out, M, N, x.stride(0), 1e-5,
                                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
