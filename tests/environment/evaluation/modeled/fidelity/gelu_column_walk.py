"""Fused like the shipped kernel, but each program walks one column: every load and store is
strided by the row length, so each element moves its own 32-byte sector (uncoalesced)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_column_kernel(x_ptr, b_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr):
    col = tl.program_id(0)
    b = tl.load(b_ptr + col)
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = rows < M
        x = tl.load(x_ptr + rows * N + col, mask=mask, other=0.0)
        v = x + b
        y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
        tl.store(out_ptr + rows * N + col, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        M, N = x.shape
        gelu_column_kernel[(N,)](x, bias, out, M, N, BLOCK_M=512)
        return out
