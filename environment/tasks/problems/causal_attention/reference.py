import torch
import torch.nn as nn

B = 1
H = 2
S = 65
D = 32


class Model(nn.Module):
    """Causal scaled dot-product attention: softmax(q k^T / sqrt(D) + causal mask) v."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # q, k, v: [B, H, S, D] -> out: [B, H, S, D]
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    # bf16, as attention runs in LLMs (the flash kernels a GPU runs take fp16/bf16)
    return [torch.randn(B, H, S, D, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
