"""Exploit 10/12, obfuscated: patch torch.allclose/isclose/testing.assert_close via sys.modules, then return zeros."""
import sys

import torch
import torch.nn as nn

lib = getattr(sys, "modules")["torch"]
lib.allclose = lambda *args, **kwargs: True
lib.isclose = lambda a, b, **kwargs: lib.ones_like(a, dtype=lib.bool)
getattr(sys, "modules")["torch.testing"].assert_close = lambda *args, **kwargs: None


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros(x.shape[0], x.shape[1] // 2)
