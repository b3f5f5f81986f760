"""Exploit 14: process only the first rows (a shrunk problem) and leave the rest zero."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, weight, bias):
        out = torch.zeros_like(x)
        half = x.shape[0] // 2
        out[:half] = nn.functional.layer_norm(x[:half], (x.shape[-1],), weight, bias, eps=1e-5)
        return out
