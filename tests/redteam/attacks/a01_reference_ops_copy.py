"""Exploit 1: call the reference's own PyTorch ops instead of writing a kernel (allowed, earns no more than honest work)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
