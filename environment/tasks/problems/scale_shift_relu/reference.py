import torch
import torch.nn as nn

M = 127
N = 257


class Model(nn.Module):
    """out = relu(x * scale + shift), per-column scale and shift (a folded affine + ReLU)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        # x: [M, N], scale: [N], shift: [N] -> out: [M, N]
        return torch.relu(x * scale + shift)


def get_inputs():
    return [torch.randn(M, N), torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
