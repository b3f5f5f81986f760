"""Exploit 10, obfuscated: patch time.perf_counter and time.monotonic through sys.modules (frozen clock in the child)."""
import sys

import torch
import torch.nn as nn

clock = getattr(sys, "modules")["time"]
clock.perf_counter = lambda: 1.0
clock.monotonic = lambda: 1.0
clock.perf_counter_ns = lambda: 1


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
