"""Plain PyTorch, the reference formula written with rsqrt and an in-row mean."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        inv_rms = torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + 1e-6)
        return x * inv_rms * weight
