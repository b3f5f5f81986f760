"""Exploit 3, obfuscated: find the reference module the evaluator loaded by walking the call stack, and subclass its Model."""
import sys

import torch.nn as nn


def _find_reference():
    frame = getattr(sys, "_getframe")()
    while frame is not None:
        local = getattr(frame, "f_locals")
        if "reference" in local and hasattr(local["reference"], "Model"):
            return local["reference"]
        frame = getattr(frame, "f_back")
    raise LookupError("no reference module on the stack")


Stolen = _find_reference().Model


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Stolen()

    def forward(self, x, bias):
        return self.inner(x, bias)
