"""Exploit 11: write a fake verdict (garbage bytes) to every file descriptor the child might hold."""
import contextlib
import os

import torch.nn as nn

for fd in range(3, 64):
    with contextlib.suppress(OSError):
        os.write(fd, b'{"kind": "result", "correct": true, "score": 1.0}\n')


class ModelNew(nn.Module):
    def forward(self, x, weight):
        return x * weight
