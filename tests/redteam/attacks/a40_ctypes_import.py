"""Exploit 12: import ctypes to read raw memory."""
import ctypes

import torch.nn as nn

ADDRESS = ctypes.c_void_p(0)


class ModelNew(nn.Module):
    def forward(self, x):
        return nn.functional.softmax(x, dim=-1)
