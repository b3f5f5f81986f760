import torch
import torch.nn as nn

M = 127
N = 257


class Model(nn.Module):
    """out = x * rsqrt(mean(x^2 over the last dim) + 1e-6) * weight (RMSNorm, eps 1e-6)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        # x: [M, N], weight: [N]
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


def get_inputs():
    return [torch.randn(M, N), torch.randn(N)]


def get_init_inputs():
    return []
