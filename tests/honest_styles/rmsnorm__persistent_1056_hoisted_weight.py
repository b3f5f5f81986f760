"""Persistent RMSNorm: a fixed grid of 1056 programs (8 per SM), blocks of 8 rows (1 on small inputs), grid-stride loop;
trailing programs are idle where there are fewer row blocks than programs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_p528(x_ptr, w_ptr, out_ptr, M, N, stride_row, eps,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    for blk in range(pid, tl.cdiv(M, BLOCK_M), G):
        rows = blk * BLOCK_M + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * stride_row + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        inv_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
        tl.store(out_ptr + offs, x * inv_rms[:, None] * w[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = 8 if M >= 4096 else 1
        rmsnorm_p528[(1056,)](x, weight.contiguous(), out, M, N, x.stride(0), 1e-6,
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=16)
        return out
