"""ROWS_PER_PROGRAM rows in a 2-D tile when rows are short, one row when they are long: picked by
triton.heuristics from N; the whole row fits one block."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK_N": lambda args: triton.next_power_of_2(args["N"]),
    "ROWS": lambda args: max(1, min(16, 4096 // triton.next_power_of_2(args["N"]))),
})
@triton.jit
def l2_normalize_tile(x_ptr, y_ptr, M, N, stride, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    norm = tl.sqrt(tl.sum(x * x, axis=1))
    y = x / tl.maximum(norm, 1e-12)[:, None]
    tl.store(y_ptr + rows[:, None] * stride + cols[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        rows = max(1, min(16, 4096 // triton.next_power_of_2(N)))
        l2_normalize_tile[(triton.cdiv(M, rows),)](x, y, M, N, x.stride(0))
        return y
