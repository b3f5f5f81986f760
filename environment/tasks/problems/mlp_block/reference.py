import torch
import torch.nn as nn

M = 127
D = 64
HID = 256


class Model(nn.Module):
    """Transformer MLP block: fc2(gelu(fc1(x))), exact (erf) GELU, nn.Linear weights."""

    def __init__(self, d_model: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: [M, D] -> h: [M, HID] -> out: [M, D]
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def get_inputs():
    return [torch.randn(M, D)]


def get_init_inputs():
    return [D, HID]
