"""GELU(x + bias), flat blocks of 1024 elements; the grid is rounded up to a multiple of 132 programs and the
programs past the end are handled by the mask alone (no early return)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_flat(x_ptr, b_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
    v = x + b
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK = 1024
        grid = (triton.cdiv(triton.cdiv(M * N, BLOCK), 132) * 132,)
        gelu_bias_flat[grid](x, bias, out, M * N, N, BLOCK=BLOCK, num_warps=4)
        return out
