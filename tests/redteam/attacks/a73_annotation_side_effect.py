"""Compile-worker escape, class 4: a kernel argument's annotation is an expression that runs submission code when the definition executes."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def announce(kind):
    print("ANNOTATION-CODE-RAN-IN", __name__)
    return kind


@triton.jit
def gelu_bias_kernel(x_ptr, b_ptr, out_ptr, n: announce(int), N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=m)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        out = torch.empty_like(x)
        gelu_bias_kernel[(triton.cdiv(x.numel(), 1024),)](x, bias, out, x.numel(), x.shape[-1], BLOCK=1024)
        return out
