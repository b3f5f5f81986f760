"""Exploit 3: import the reference Model and wrap it."""
import torch.nn as nn
from reference import Model


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Model()

    def forward(self, x, bias):
        return self.inner(x, bias)
