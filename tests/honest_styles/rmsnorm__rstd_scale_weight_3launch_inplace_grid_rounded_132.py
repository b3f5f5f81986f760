"""RMSNorm in three launches (the last on a flat grid rounded up to a multiple of the 132 SMs, extra programs masked off): per-row rstd, then out = x * rstd (2-D tiles), then out *= weight in place (flat)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_rstd(x_ptr, rstd_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
        acc += x * x
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps))


@triton.jit
def scale_rows(x_ptr, rstd_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    r = tl.load(rstd_ptr + rows, mask=rows < M, other=0.0)
    tl.store(out_ptr + offs, x * r[:, None], mask=mask)


@triton.jit
def mul_weight_flat_inplace(y_ptr, w_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs % N, mask=mask, other=0.0)
    tl.store(y_ptr + offs, y * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        weight = weight.contiguous()
        M, N = x.shape
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        out = torch.empty_like(x)
        row_rstd[(M,)](x, rstd, N, x.stride(0), 1e-6, BLOCK=1024)
        scale_rows[(triton.cdiv(M, 16), triton.cdiv(N, 256))](x, rstd, out, M, N, x.stride(0), BLOCK_M=16, BLOCK_N=256)
        n = out.numel()
        mul_weight_flat_inplace[(triton.cdiv(triton.cdiv(n, 2048), 132) * 132,)](out, weight, n, N, BLOCK=2048)
        return out
