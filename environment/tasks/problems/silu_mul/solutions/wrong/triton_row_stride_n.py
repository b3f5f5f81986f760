"""Wrong: indexes rows of x with stride N instead of 2*N, reading the wrong rows after row 0."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_mul_kernel(x_ptr, out_ptr, n_out, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    row = offs // N
    col = offs % N
    gate = tl.load(x_ptr + row * N + col, mask=mask, other=0.0)
    up = tl.load(x_ptr + row * N + N + col, mask=mask, other=0.0)
    tl.store(out_ptr + offs, gate * tl.sigmoid(gate) * up, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, two_n = x.shape
        N = two_n // 2
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BLOCK = 4096  # few, large programs: cheap for the interpreter, fine on a GPU
        silu_mul_kernel[(triton.cdiv(M * N, BLOCK),)](x, out, M * N, N, BLOCK=BLOCK)
        return out
