"""Trusted accounting, class 1 (work the counter never sees): a counted op zero-fills the output, then host numpy fills it through a .numpy() view."""
import math

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, bias):
        out = torch.zeros_like(x)  # a counted launch writes every output byte
        v = x.numpy() + bias.numpy()
        out.numpy()[:] = 0.5 * v * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))
        return out
