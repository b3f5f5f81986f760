"""Plain PyTorch: torch.addcmul for the affine, then an in-place ReLU on the fresh result."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale, shift):
        return torch.addcmul(shift, x, scale).relu_()
