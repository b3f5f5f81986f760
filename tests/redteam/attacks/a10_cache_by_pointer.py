"""Exploit 6: cache results keyed by the input's data pointer and serve them on later calls."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        if x.data_ptr() not in self.cache:
            self.cache[x.data_ptr()] = torch.softmax(x, dim=-1)
        return self.cache[x.data_ptr()]
