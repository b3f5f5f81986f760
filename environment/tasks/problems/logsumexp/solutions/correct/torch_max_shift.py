"""Plain PyTorch: shift by the row max, sum the exponentials, add the max back after the log."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        m = x.amax(dim=-1, keepdim=True)
        return (m + torch.log(torch.exp(x - m).sum(dim=-1, keepdim=True))).squeeze(-1)
