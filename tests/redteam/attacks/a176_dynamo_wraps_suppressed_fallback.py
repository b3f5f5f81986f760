"""torch._dynamo by a computed name wraps a forward whose contextlib.suppress (fetched by a computed name, a61) swallows a failing kernel: dynamo must not carry the fallback past the run-time guard."""
import contextlib

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.not_a_function(tl.load(x_ptr + offs)))


quiet = getattr(contextlib, "sup" + "press")
_dynamo = getattr(torch, "_dyn" + "amo")


class _Model(nn.Module):
    def forward(self, x):
        with quiet(Exception):
            out = torch.empty_like(x)
            softmax_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
            return out
        return torch.softmax(x, dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Model()
        self.run = _dynamo.optimize("eager")(self.inner.forward)

    def forward(self, x):
        return self.run(x)
