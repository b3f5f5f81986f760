import torch
import torch.nn as nn

M = 127
N = 257


class Model(nn.Module):
    """SwiGLU gating: split x into halves (gate, up) along the last dim; out = silu(gate) * up."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: [M, 2 * N] -> out: [M, N]
        gate, up = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up


def get_inputs():
    return [torch.randn(M, 2 * N)]


def get_init_inputs():
    return []
