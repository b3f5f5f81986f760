"""Rule evasion: a context manager whose __exit__ returns True swallows the failing kernel launch (a try/except in disguise), then PyTorch answers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.not_a_function(tl.load(x_ptr + offs)))


class Quietly:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


class ModelNew(nn.Module):
    def forward(self, x):
        with Quietly():
            out = torch.empty_like(x)
            softmax_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
            return out
        return torch.softmax(x, dim=-1)
