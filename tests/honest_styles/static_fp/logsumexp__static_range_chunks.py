"""Rows handled BLOCK_M at a time (2-D tiles); the column loop is unrolled at compile time with
tl.static_range over NUM_CHUNKS, a constexpr the host computes from the width."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_M = 4
CHUNK = 128


@triton.jit
def _chunk(x_ptr, rows, stride, N, c: tl.constexpr, CHUNK: tl.constexpr):
    cols = c * CHUNK + tl.arange(0, CHUNK)
    return tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=cols[None, :] < N, other=-float("inf"))


@triton.jit
def lse_tile_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, CHUNK: tl.constexpr,
                    NUM_CHUNKS: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rows_c = tl.minimum(rows, M - 1)
    m = tl.full([BLOCK_M], -float("inf"), tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        m = tl.maximum(m, tl.max(_chunk(x_ptr, rows_c, stride, N, c, CHUNK), axis=1))
    s = tl.zeros([BLOCK_M], tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        x = _chunk(x_ptr, rows_c, stride, N, c, CHUNK)
        s += tl.sum(tl.exp(x - m[:, None]), axis=1)
    tl.store(out_ptr + rows, m + tl.log(s), mask=rows < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty(M, device=x.device, dtype=torch.float32)
        num_chunks = triton.cdiv(N, CHUNK)
        lse_tile_kernel[(triton.cdiv(M, BLOCK_M),)](x, out, M, N, x.stride(0), BLOCK_M=BLOCK_M, CHUNK=CHUNK,
                                                    NUM_CHUNKS=num_chunks)
        return out
