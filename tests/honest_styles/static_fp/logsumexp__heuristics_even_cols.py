"""triton.heuristics picks the block from N and drops the mask when N divides the block (EVEN_N); one program
per row, a chunked max then a chunked sum of exp."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK_N": lambda args: min(triton.next_power_of_2(args["N"]), 1024),
    "EVEN_N": lambda args: args["N"] % min(triton.next_power_of_2(args["N"]), 1024) == 0,
})
@triton.jit
def logsumexp_rows(x_ptr, out_ptr, stride_row, N, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride_row
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            x = tl.load(base + cols)
        else:
            x = tl.load(base + cols, mask=cols < N, other=-float("inf"))
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            x = tl.load(base + cols)
        else:
            x = tl.load(base + cols, mask=cols < N, other=-float("inf"))
        s += tl.exp(x - row_max)
    tl.store(out_ptr + row, row_max + tl.log(tl.sum(s, axis=0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty((M,), device=x.device, dtype=x.dtype)
        logsumexp_rows[(M,)](x, out, x.stride(0), N)
        return out
