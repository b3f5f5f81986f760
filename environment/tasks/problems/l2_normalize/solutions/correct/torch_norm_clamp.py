"""Plain PyTorch: vector norm per row, clamped at 1e-12, then a broadcast divide."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(1e-12)
