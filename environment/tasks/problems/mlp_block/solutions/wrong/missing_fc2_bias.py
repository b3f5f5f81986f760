"""Wrong: drops the second layer's bias (F.linear without fc2.bias)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, x):
        return F.linear(F.gelu(self.fc1(x)), self.fc2.weight)
