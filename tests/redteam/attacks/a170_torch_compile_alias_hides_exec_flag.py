"""An alias of the refused torch.compile named after a forbidden builtin (`from torch import compile as exec`, then `del exec`) hid the forbidden_call flag of the builtin exec it uncovers: a hack turned into a plain refusal."""
import torch
import torch.nn as nn
from torch import compile as exec  # the static pass took every later `exec(...)` for torch.compile

del exec  # the builtin exec is back under the same name


class ModelNew(nn.Module):
    def forward(self, x, bias):
        scope = {"torch": torch, "x": x, "bias": bias}
        exec("out = torch.nn.functional.gelu(x + bias)", scope)
        return scope["out"]
