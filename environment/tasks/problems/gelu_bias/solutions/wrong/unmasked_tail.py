"""Wrong: forgets the bias on the last column (an off-by-one in the broadcast)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        b = bias.clone()
        b[-1] = 0.0
        return torch.nn.functional.gelu(x + b)
