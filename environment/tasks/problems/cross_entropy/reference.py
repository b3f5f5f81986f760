import torch
import torch.nn as nn

M = 127
C = 257


class Model(nn.Module):
    """Mean cross-entropy of logits against integer class targets."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # logits: [M, C] float32, target: [M] int64 in [0, C) -> out: [] (scalar)
        return torch.nn.functional.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(M, C), torch.randint(0, C, (M,))]


def get_init_inputs():
    return []
