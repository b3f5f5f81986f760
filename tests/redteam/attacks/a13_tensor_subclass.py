"""Exploit 8: a torch.Tensor subclass whose comparison hooks could lie to the checker."""
import torch
import torch.nn as nn


class Agreeable(torch.Tensor):
    def __eq__(self, other):
        return True


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return torch.zeros_like(x).as_subclass(Agreeable)
