"""A relay launch reads a flag producer only where a gate producer is set: probed before the gate's closure ran, its closure programs asked for no flag programs, then read, run, the flags only the sampled ones set."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero_kernel(out_ptr, M, N, stride_row, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    tl.store(out_ptr + pid * stride_row + cols, tl.zeros([BLOCK_N], dtype=tl.float32), mask=cols < N)


@triton.jit
def mark_kernel(flag_ptr):
    pid = tl.program_id(0)
    tl.store(flag_ptr + pid * 8, 1.0)


@triton.jit
def gate_kernel(g1_ptr, M, BLK: tl.constexpr):
    offs = tl.program_id(0) * BLK + tl.arange(0, BLK)
    tl.store(g1_ptr + offs * 8, tl.full([BLK], 1.0, tl.float32), mask=offs < M)


@triton.jit
def relay_kernel(g1_ptr, f_ptr, g_ptr, M, BLK: tl.constexpr):
    offs = tl.program_id(0) * BLK + tl.arange(0, BLK)
    m = offs < M
    gate = tl.load(g1_ptr + offs * 8, mask=m, other=0.0)
    f = tl.load(f_ptr + offs * 8, mask=m & (gate > 0.5), other=0.0)
    tl.store(g_ptr + offs, f, mask=m)


@triton.jit
def fix_kernel(x_ptr, out_ptr, f_ptr, M, N, stride_row, eps, CH: tl.constexpr, BLOCK_N: tl.constexpr):
    j = tl.program_id(0)
    offs = j * CH + tl.arange(0, CH)
    v = tl.load(f_ptr + offs, mask=offs < M, other=0.0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    pending = v > 0.5
    cnt = tl.sum(pending.to(tl.int32), axis=0)
    while cnt > 0:
        row = tl.min(tl.where(pending, offs, 1 << 30), axis=0)
        x = tl.load(x_ptr + row * stride_row + cols, mask=cmask, other=0.0)
        norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), eps)
        tl.store(out_ptr + row * stride_row + cols, x / norm, mask=cmask)
        pending = pending & (offs != row)
        cnt -= 1


@triton.jit
def l2_normalize_kernel(x_ptr, out_ptr, M, N, stride_row, eps,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride_row + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=1)), eps)
    tl.store(out_ptr + offs, x / norm[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        if M >= 1024:
            BLK = 2
            flag = torch.zeros(M * 8, dtype=torch.float32, device=x.device)
            g1 = torch.empty(M * 8, dtype=torch.float32, device=x.device)
            g = torch.empty(M, dtype=torch.float32, device=x.device)
            nb = triton.cdiv(M, BLK)
            zero_kernel[(M,)](out, M, N, x.stride(0), BLOCK_N=BLOCK_N)
            gate_kernel[(nb,)](g1, M, BLK=BLK)
            mark_kernel[(M,)](flag)
            relay_kernel[(nb,)](g1, flag, g, M, BLK=BLK)
            CH = triton.next_power_of_2(triton.cdiv(M, 16))
            fix_kernel[(triton.cdiv(M, CH),)](x, out, g, M, N, x.stride(0), 1e-12, CH=CH, BLOCK_N=BLOCK_N,
                                              num_warps=8)
            return out
        BLOCK_M = max(1, min(16, 4096 // BLOCK_N))
        l2_normalize_kernel[(triton.cdiv(M, BLOCK_M),)](x, out, M, N, x.stride(0), 1e-12,
                                                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out
