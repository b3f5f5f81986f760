"""Exploit 9: fork a helper process (os.fork reached through getattr) to work outside the timed window."""
import os

import torch
import torch.nn as nn

helper = getattr(os, "fo" + "rk")()


class ModelNew(nn.Module):
    def forward(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
