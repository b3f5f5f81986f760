"""Trusted accounting, class 1: a registered custom operator whose body does the whole softmax, to be charged as one cheap launch."""
import torch
import torch.nn as nn


@torch.library.custom_op("kp_redteam::fast_softmax", mutates_args=())
def fast_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@fast_softmax.register_fake
def _(x):
    return torch.empty_like(x)


class ModelNew(nn.Module):
    def forward(self, x):
        return fast_softmax(x)
