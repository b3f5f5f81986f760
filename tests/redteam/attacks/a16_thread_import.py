"""Exploit 9: compute in a background thread so the work escapes the timed window."""
import threading

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, bias):
        out = torch.empty_like(x)
        threading.Thread(target=lambda: out.copy_(torch.nn.functional.gelu(x + bias))).start()
        return out
