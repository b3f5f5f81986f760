"""torch.compile's machinery reached past the static refusal and the runtime guard on torch.compile: torch._dynamo fetched by a computed name, forward compiled with the inductor backend (a C++ compile: processes and threads the sandbox refuses) or run through dynamo's frame evaluation."""
import torch
import torch.nn as nn

_dynamo = getattr(torch, "_dyn" + "amo")


def _gelu_bias(x, bias):
    return torch.nn.functional.gelu(x + bias)


_compiled = _dynamo.optimize("inductor")(_gelu_bias)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return _compiled(x, bias)
