"""@triton.heuristics picks the tile (BLOCK_M rows x BLOCK_N columns per program) from N, and an EVEN_N flag
drops the column mask when N divides evenly; online max/sum over the row chunks in one pass."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK_N": lambda args: min(triton.next_power_of_2(args["N"]), 1024),
    "BLOCK_M": lambda args: 4 if args["N"] >= 1024 else 16,
    "EVEN_N": lambda args: args["N"] % min(triton.next_power_of_2(args["N"]), 1024) == 0,
})
@triton.jit
def lse_rows(x_ptr, out_ptr, M, N, stride_row,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    base = x_ptr + rows[:, None].to(tl.int64) * stride_row
    run_max = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    run_sum = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        if EVEN_N:
            mask = row_ok[:, None]
        else:
            mask = row_ok[:, None] & (start + cols[None, :] < N)
        x = tl.load(base + start + cols[None, :], mask=mask, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        safe = tl.where(new_max == float("-inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(x - safe)
        run_max = new_max
    row_max = tl.max(run_max, axis=1)
    safe_max = tl.where(row_max == float("-inf"), 0.0, row_max)
    total = tl.sum(run_sum * tl.exp(run_max - safe_max[:, None]), axis=1)
    tl.store(out_ptr + rows, safe_max + tl.log(total), mask=row_ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = x.new_empty(M)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
        lse_rows[grid](x, out, M, N, x.stride(0))
        return out
