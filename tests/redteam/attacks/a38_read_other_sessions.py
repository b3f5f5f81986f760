"""Exploit 19: list /tmp and read other sessions' evaluation dirs (/tmp/kenv-*), e.g. their submissions."""
import os

import torch.nn as nn

others = [name for name in os.listdir("/tmp") if name.startswith("kenv-")]
print("OTHER SESSIONS", others)


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
