"""Exact-erf GELU fused with the bias add; a Triton version probed by a guarded import
(the try/except ImportError people copy between releases; this elementwise kernel needs no TMA); module constants for the block and 1/sqrt(2)
(a tl.constexpr: Triton refuses a plain float global in a kernel compiled for a GPU, though the interpreter allows it)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

try:  # the version guard copied from tutorial 09: TMA descriptors exist from Triton 3.4 on
    from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    HAS_TENSOR_DESCRIPTOR = True
except ImportError:
    HAS_TENSOR_DESCRIPTOR = False

BLOCK_SIZE = 1024
INV_SQRT2 = tl.constexpr(0.7071067811865476)


@triton.jit
def gelu_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, n_cols, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offsets % n_cols, mask=mask, other=0.0)
    v = x + b
    tl.store(out_ptr + offsets, 0.5 * v * (1.0 + tl.math.erf(v * INV_SQRT2)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        assert x.is_contiguous() and bias.is_contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        gelu_bias_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, bias, out, n, x.shape[-1], BLOCK_SIZE=BLOCK_SIZE)
        return out
