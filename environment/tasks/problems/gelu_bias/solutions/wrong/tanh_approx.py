"""Wrong: uses the tanh approximation of GELU, off by up to ~1e-3 from the erf form."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias, approximate="tanh")
