"""Compile-worker escape, class 4: a module-level constant the kernel needs is computed by a submission function with side effects."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def pick_block():
    print("CONSTANT-CODE-RAN-IN", __name__)
    return 1024


BLOCK_SIZE = tl.constexpr(pick_block())


@triton.jit
def gelu_bias_kernel(x_ptr, b_ptr, out_ptr, n, N):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=m)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        out = torch.empty_like(x)
        gelu_bias_kernel[(triton.cdiv(x.numel(), 1024),)](x, bias, out, x.numel(), x.shape[-1])
        return out
