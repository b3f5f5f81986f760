"""Persistent rows: a grid of min(programs the device keeps resident, M) programs, each striding over rows by
tl.num_programs(0); the norm clamped at 1e-12 as F.normalize does."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_SMS = 132
EPS = 1e-12


@triton.jit
def l2norm_persistent(x_ptr, y_ptr, M, N, stride, eps, BLOCK_N: tl.constexpr):
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0)):
        acc = tl.zeros([BLOCK_N], tl.float32)
        for c0 in range(0, N, BLOCK_N):
            cols = c0 + tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
            acc += x * x
        denom = tl.maximum(tl.sqrt(tl.sum(acc, axis=0)), eps)
        for c0 in range(0, N, BLOCK_N):
            cols = c0 + tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
            tl.store(y_ptr + row * stride + cols, x / denom, mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        grid = (min(NUM_SMS * 8, M),)
        l2norm_persistent[grid](x, y, M, N, x.stride(0), EPS, BLOCK_N=min(triton.next_power_of_2(N), 4096))
        return y
