"""Wrong: indexes logp[:, target] (an [M, M] block of every row at every target) instead of one per row."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return -torch.log_softmax(logits, dim=-1)[:, target].mean()
