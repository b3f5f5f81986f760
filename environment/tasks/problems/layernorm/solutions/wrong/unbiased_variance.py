"""Wrong: uses torch.var's default unbiased variance (divides by N - 1, not N)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + 1e-5) * weight + bias
