"""One fused Triton kernel: load x, scale and shift once, fma, max with 0, one store."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_relu_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, n_elements, N,
                            BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    col = offs % N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    scale = tl.load(scale_ptr + col, mask=mask, other=0.0)
    shift = tl.load(shift_ptr + col, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x * scale + shift, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale, shift):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096  # few, large programs: cheap for the interpreter, fine on a GPU
        scale_shift_relu_kernel[(triton.cdiv(n, BLOCK),)](x, scale, shift, out, n, x.shape[-1],
                                                          BLOCK=BLOCK)
        return out
