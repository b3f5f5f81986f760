"""Rule evasion: break inside finally discards the failing kernel's exception (a try/except in disguise), then PyTorch answers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def broken_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.not_a_function(tl.load(x_ptr + offs)))


class ModelNew(nn.Module):
    def forward(self, x, bias):
        for _ in range(1):
            try:
                out = torch.empty_like(x)
                broken_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
                return out
            finally:
                break
        return torch.nn.functional.gelu(x + bias)
