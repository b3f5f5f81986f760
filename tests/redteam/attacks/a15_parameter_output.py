"""Exploit 8, obfuscated: return an nn.Parameter (a Tensor subclass the static check cannot see) instead of a plain tensor."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return nn.Parameter(torch.softmax(x, dim=-1), requires_grad=False)
