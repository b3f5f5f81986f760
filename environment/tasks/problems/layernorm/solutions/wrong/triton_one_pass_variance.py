"""Wrong: one-pass variance E[x^2] - mean^2, which cancels catastrophically in fp32 when a row's mean is large against its spread."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, stride_row, eps,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / N
    var = tl.maximum(tl.sum(x * x, axis=1) / N - mean * mean, 0.0)  # one pass over the row
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + offs, (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, min(16, 4096 // BLOCK_N))
        layernorm_kernel[(triton.cdiv(M, BLOCK_M),)](x, weight, bias, out, M, N, x.stride(0), 1e-5,
                                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
