"""Exploit 19: TCP connect to the server port with seccomp off, so Landlock network rules alone must refuse it."""
import email.utils

import torch.nn as nn

net = email.utils.socket
conn = net.socket(net.AF_INET, net.SOCK_STREAM)
conn.connect(("127.0.0.1", 8000))


class ModelNew(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return nn.functional.silu(gate) * up
