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
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return []
