"""Exploit 11/19: drop a fake result file where the evaluator or the server might look (/tmp)."""
import io

import torch.nn as nn

io.open("result.json", "w").write('{"correct": true, "score": 1.0}')  # own temp dir: allowed, never read
io.open("/tmp/kenv-result.json", "w").write('{"correct": true, "score": 1.0}')


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
