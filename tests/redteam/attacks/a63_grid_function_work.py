"""Trusted accounting, class 1: the grid function computes the output with PyTorch while the interpreter runs a kernel that stores nothing."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        out = torch.empty_like(x)

        def grid(meta):
            out.copy_(torch.nn.functional.gelu(x + bias))
            return (triton.cdiv(x.numel(), meta["BLOCK"]),)

        touch[grid](x, out, x.numel(), BLOCK=1024)
        return out
