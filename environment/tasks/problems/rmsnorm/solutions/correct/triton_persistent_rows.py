"""Persistent RMSNorm: at most one program per SM (132), each walks row blocks pid, pid + G, ... (grid-stride)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_persistent(x_ptr, w_ptr, out_ptr, M, N, stride_row, eps,
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
        BLOCK_M = max(1, min(4, 4096 // BLOCK_N))
        grid = (min(triton.cdiv(M, BLOCK_M), 132),)
        rmsnorm_persistent[grid](x, weight.contiguous(), out, M, N, x.stride(0), 1e-6,
                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
