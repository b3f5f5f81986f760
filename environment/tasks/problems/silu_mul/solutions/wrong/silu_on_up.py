"""Wrong: applies SiLU to the second half (up) instead of the first half (gate)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return gate * torch.nn.functional.silu(up)
