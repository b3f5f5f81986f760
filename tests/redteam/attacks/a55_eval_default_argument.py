"""Rule evasion: eval smuggled in as a default argument value, then called through the parameter."""
import torch.nn as nn


def resolve(path, evaluate=eval):
    return evaluate(path)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return resolve("__import__('torch').nn.functional.gelu")(x + bias)
