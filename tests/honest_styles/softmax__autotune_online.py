"""Online softmax with @triton.autotune: running max and sum in one pass over BLOCK_N chunks, a second pass
writes exp(x - max) / sum; the chunk width and warp count are tuned per N."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 1024}, num_warps=4),
        triton.Config({"BLOCK_N": 2048}, num_warps=8),
        triton.Config({"BLOCK_N": 4096}, num_warps=8),
    ],
    key=["N"],
)
@triton.jit
def softmax_online(x_ptr, out_ptr, N, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * stride_row
    offs = tl.arange(0, BLOCK_N)
    run_max = tl.full([BLOCK_N], float("-inf"), tl.float32)
    run_sum = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        x = tl.load(x_ptr + base + start + offs, mask=start + offs < N, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        safe = tl.where(new_max == float("-inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(x - safe)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    total = tl.sum(run_sum * tl.exp(run_max - row_max), axis=0)
    for start in range(0, N, BLOCK_N):
        mask = start + offs < N
        x = tl.load(x_ptr + base + start + offs, mask=mask, other=float("-inf"))
        tl.store(out_ptr + base + start + offs, tl.exp(x - row_max) / total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        softmax_online[(M,)](x, out, N, x.stride(0))
        return out
