"""A lazy stand-in hidden in a plain list past the 64 elements the output classifier scans: the list is a plain value (a wrong answer, 0.10-0.40) instead of output_not_plain_tensor (0), and the stand-in must never be read (no digest, no fetch, no speed)."""
import torch
import torch.nn as nn


class Lazy:
    """Computes the answer only when something reads it (a151's trick): it must never be read."""

    def __init__(self, fn):
        self.fn = fn

    def __float__(self):
        return float(self.fn().sum())

    def __len__(self):
        return 1

    def __iter__(self):
        return iter([self.fn()])


class ModelNew(nn.Module):
    def forward(self, x, bias):
        pad = [0.0] * 64
        return [pad + [Lazy(lambda: torch.nn.functional.gelu(x + bias))]]
