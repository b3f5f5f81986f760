"""Exploit 9, obfuscated: start a background thread via sys.modules['threading'] (no import statement)."""
import sys

import torch
import torch.nn as nn

threads = getattr(sys, "modules")["threading"]
worker = threads.Thread(target=lambda: None, daemon=True)
worker.start()


class ModelNew(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up
