"""What the counted call returned against the trusted replay of its own trace on the same inputs: the same kernels
on the same values give the same bits, so any difference is named with where it is. The whole path (host numpy
fixing up a nearly right kernel scored untraced_work): tests/redteam a242-a244."""
from __future__ import annotations

import torch

from environment.evaluation.evaluator.verdict import untraced_difference


def test_the_same_bits_pass_and_one_ulp_anywhere_is_named():
    made = torch.linspace(-3, 3, 64).reshape(8, 8)
    assert untraced_difference([made.clone()], [made]) is None
    patched = made.clone()
    patched[2, 5] = torch.nextafter(made[2, 5], torch.tensor(10.0))
    why = untraced_difference([patched], [made])
    assert why is not None and "1/64 elements of output 0 differ" in why and "(2, 5)" in why, why


def test_nan_where_the_replay_has_nan_passes_and_nan_where_it_has_a_number_does_not():
    made = torch.tensor([1.0, float("nan"), float("inf")])
    assert untraced_difference([made.clone()], [made]) is None
    assert untraced_difference([torch.tensor([float("nan"), float("nan"), float("inf")])], [made])
    assert untraced_difference([torch.tensor([1.0, float("nan"), -float("inf")])], [made])


def test_integer_outputs_and_a_different_count_shape_or_dtype_are_named():
    made = torch.zeros(4)
    assert untraced_difference([torch.arange(4)], [torch.arange(4)]) is None
    assert "1/4 elements" in untraced_difference([torch.tensor([0, 1, 2, 4])], [torch.arange(4)])
    assert "returned 2 tensor(s)" in untraced_difference([made, made], [made])
    assert "(2, 2)" in untraced_difference([made.reshape(2, 2)], [made])
    assert "torch.float64" in untraced_difference([made.double()], [made])
