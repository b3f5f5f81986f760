"""Custom-combine tl.reduce / tl.associative_scan run on slices in the interpreter (log2(n) combine calls, not
one per element), with the interpreter's results: a Welford merge, an online-softmax pair, a non-commutative
linear-recurrence scan (order kept, slices of every length
from 63 down to 32), keep_dims. Real kernels under TRITON_INTERPRET=1."""
from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from environment.evaluation.child import gpu_numerics
from environment.evaluation.modeled import tree_combine


@triton.jit
def _welford(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    frac = n_b / tl.where(n == 0.0, 1.0, n)
    delta = mean_b - mean_a
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def _welford_rows(x_ptr, mean_ptr, var_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < BLOCK_M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    mean, m2, n = tl.reduce((x, tl.zeros_like(x), tl.where(mask, 1.0, 0.0)), 1, _welford)
    tl.store(mean_ptr + rows, mean)
    tl.store(var_ptr + rows, m2 / n)


@triton.jit
def _affine(a1, b1, a2, b2):  # x -> a2 * (a1 * x + b1) + b2: associative, not commutative
    return a1 * a2, a2 * b1 + b2


@triton.jit
def _recurrence(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    _, h = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), 0, _affine, reverse=REVERSE)
    tl.store(out_ptr + offs, h)


@triton.jit
def _whole_block(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    _, h = tl.reduce((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), None, _affine, keep_dims=True)
    tl.store(out_ptr + tl.arange(0, 1), h)


@pytest.fixture
def combine_calls(monkeypatch):
    gpu_numerics.install()
    calls = []
    original = tree_combine._call

    def counted(op, left, right, dtypes):
        calls.append(left[0].shape)
        return original(op, left, right, dtypes)

    monkeypatch.setattr(tree_combine, "_call", counted)
    return calls


def test_a_welford_reduce_runs_on_slices_and_matches_the_two_pass_statistics(combine_calls):
    torch.manual_seed(0)
    x = torch.randn(4, 1000, dtype=torch.float64).float() * 3 + 1000.0  # means far from zero
    mean, var = torch.empty(4), torch.empty(4)
    _welford_rows[(1,)](x, mean, var, 1000, BLOCK_M=4, BLOCK_N=1024)
    torch.testing.assert_close(mean, x.double().mean(1).float(), rtol=1e-6, atol=0)
    torch.testing.assert_close(var, x.double().var(1, unbiased=False).float(), rtol=1e-4, atol=0)
    assert len(combine_calls) == 10 and combine_calls[0] == (4, 512)  # log2(1024) calls on slices


def _recurrence_ref(a, b):
    h, out = 0.0, []
    for ai, bi in zip(a.tolist(), b.tolist()):
        h = ai * h + bi
        out.append(h)
    return torch.tensor(out)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_non_commutative_scan_keeps_the_order_of_its_operands(combine_calls, reverse):
    torch.manual_seed(1)
    a, b = torch.rand(64) * 0.5 + 0.5, torch.randn(64)
    out = torch.empty(64)
    _recurrence[(1,)](a, b, out, BLOCK=64, REVERSE=reverse)
    want = _recurrence_ref(a.flip(0), b.flip(0)).flip(0) if reverse else _recurrence_ref(a, b)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    assert len(combine_calls) == 6  # steps 1, 2, ..., 32


def test_a_reduce_over_the_whole_block_with_keep_dims_keeps_the_order_too(combine_calls):
    torch.manual_seed(2)
    a, b = torch.rand(32) * 0.5 + 0.5, torch.randn(32)
    out = torch.empty(1)
    _whole_block[(1,)](a, b, out, BLOCK=32)
    torch.testing.assert_close(out, _recurrence_ref(a, b)[-1:], rtol=1e-5, atol=1e-5)
    assert len(combine_calls) == 5
