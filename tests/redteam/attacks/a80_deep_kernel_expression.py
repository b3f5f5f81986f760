"""Harness robustness (reviewer r06): a kernel-body expression deep enough to crash the trusted kernel rebuild with RecursionError."""
"""One fused Triton kernel: load x and bias once, add, exact GELU, store once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_kernel(x_ptr, b_ptr, out_ptr, n_elements, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
    v = x + b
    v = v + (v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0 + v * 0.0)
    y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        gelu_bias_kernel[grid](x, bias, out, n, x.shape[-1], BLOCK=BLOCK)
        return out
