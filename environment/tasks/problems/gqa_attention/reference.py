import torch
import torch.nn as nn

B = 1
HQ = 4
HKV = 2
S = 65
D = 32


class Model(nn.Module):
    """Grouped-query attention (non-causal): each group of HQ // HKV query heads shares one k/v head."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # q: [B, HQ, S, D], k, v: [B, HKV, S, D] -> out: [B, HQ, S, D]
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def get_inputs():
    # bf16, as attention runs in LLMs (the flash kernels a GPU runs take fp16/bf16)
    return [torch.randn(B, HQ, S, D, dtype=torch.bfloat16), torch.randn(B, HKV, S, D, dtype=torch.bfloat16),
            torch.randn(B, HKV, S, D, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
