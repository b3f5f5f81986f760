"""Exploit 8, obfuscated: a tensor subclass built with type() (no class statement), returned as the output."""
import torch
import torch.nn as nn

Lazy = type("Lazy", (torch.Tensor,), {"__eq__": lambda self, other: True})


class ModelNew(nn.Module):
    def forward(self, x, weight, bias):
        out = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
        return out.as_subclass(Lazy)
