"""Exploit 18: kill the parent, with seccomp off, so Landlock signal scoping alone must refuse it."""
import os

import torch.nn as nn

getattr(os, "ki" + "ll")(os.getppid(), 9)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return nn.functional.gelu(x + bias)
