"""Wrong: a leaky ReLU (slope 0.01 for negatives) instead of ReLU."""
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
    y = x * scale + shift
    tl.store(out_ptr + offs, tl.where(y > 0, y, 0.01 * y), mask=mask)


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
