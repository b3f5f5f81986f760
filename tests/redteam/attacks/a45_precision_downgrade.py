"""Exploit 15: compute and return fp16 under an fp32 contract."""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return nn.functional.gelu(x.half() + bias.half())
