"""Exploit 16: results that depend on call history (like reads of uninitialised memory): repeat calls differ."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x, weight):
        self.calls += 1
        out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
        return out + (self.calls % 2 == 0) * 1e-2
