"""Exploit 13/19: look for the server secret and API tokens in the child's own environment (os.environ via getattr)."""
import os

import torch
import torch.nn as nn

env = getattr(os, "env" + "iron")
leaked = sorted(k for k in env if "SECRET" in k or k.startswith(("HF_", "OPENAI", "AWS_", "KERNEL_ENV")))
if leaked:
    raise RuntimeError(f"LEAKED {leaked}")
print("ENV KEYS", sorted(env))


class ModelNew(nn.Module):
    def forward(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
