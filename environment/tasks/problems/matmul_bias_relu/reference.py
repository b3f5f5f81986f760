import torch
import torch.nn as nn

M = 127
K = 129
N = 65


class Model(nn.Module):
    """out = relu(a @ b + bias): a matmul with a fused bias + ReLU epilogue."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        # a: [M, K], b: [K, N], bias: [N] -> out: [M, N]
        return torch.relu(a @ b + bias)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(N)]


def get_init_inputs():
    return []
