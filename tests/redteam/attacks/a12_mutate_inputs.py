"""Exploit 7: write the result into the input tensor (so a reference run on the same storage would see garbage)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, scale, shift):
        x.mul_(scale).add_(shift).relu_()
        scale.zero_()
        return x
