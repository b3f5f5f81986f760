"""The output starts as a fresh copy of x and the kernel updates it in place (read, scale, shift, clamp, store to
the same address): one buffer, no aliasing with the caller's tensor."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_relu_inplace(y_ptr, scale_ptr, shift_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    col = offs % n_cols
    y = tl.load(y_ptr + offs, mask=mask)
    y = y * tl.load(scale_ptr + col, mask=mask) + tl.load(shift_ptr + col, mask=mask)
    tl.store(y_ptr + offs, tl.where(y > 0, y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale, shift):
        y = x.clone(memory_format=torch.contiguous_format)
        n = y.numel()
        scale_shift_relu_inplace[(triton.cdiv(n, 2048),)](y, scale, shift, n, y.shape[-1], BLOCK=2048)
        return y
