"""Plain PyTorch: log_softmax, gather each row's target log-probability, negate and average."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        logp = torch.log_softmax(logits, dim=-1)
        return -logp.gather(1, target.unsqueeze(1)).mean()
