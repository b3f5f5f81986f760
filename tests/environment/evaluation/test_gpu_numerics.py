"""The interpreter judged as an H100 (environment/evaluation/child/gpu_numerics.py), in this process:
tl.dot rounds its operands as sm_90 does, programs run in a secret order, write-write races are named."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from environment.config import detect_backend
from environment.evaluation.child import gpu_numerics

pytestmark = pytest.mark.skipif(detect_backend() != "cpu", reason="the interpreter's numerics are a CPU-host concern")
gpu_numerics.install()


def test_tf32_truncation_keeps_ten_mantissa_bits_as_the_tensor_cores_read_fp32():
    x = np.array([1.0 + 2**-10 + 2**-11 + 2**-12, -3.0000002, 0.0, np.inf, -np.inf], dtype=np.float32)
    out = gpu_numerics.tf32_truncate(x)
    assert out.tolist() == [1.0 + 2**-10, -3.0, 0.0, np.inf, -np.inf]
    assert np.isnan(gpu_numerics.tf32_truncate(np.array([np.nan], np.float32)))[0]


def test_tf32_rounding_is_to_nearest_with_ties_away_from_zero_like_cvt_rna():
    x = np.array([1.0 + 2**-11, 1.0 + 2**-11 + 2**-20, 1.0 + 2**-12, -(1.0 + 2**-11), np.inf], dtype=np.float32)
    assert gpu_numerics.tf32_round(x).tolist() == [1.0 + 2**-10, 1.0 + 2**-10, 1.0, -(1.0 + 2**-10), np.inf]


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    if PRECISION == 0:
        c = tl.dot(a, b)
    elif PRECISION == 1:
        c = tl.dot(a, b, input_precision="tf32x3")
    else:
        c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)


def _dot(precision: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(32, 32, generator=gen), torch.randn(32, 32, generator=gen)
    c = torch.empty(32, 32)
    _dot_kernel[(1,)](a, b, c, PRECISION=precision)
    return c, (a.double() @ b.double())


def test_default_tl_dot_multiplies_tf32_operands_and_misses_fp32_accuracy():
    c, exact = _dot(0)
    err = (c.double() - exact).abs().max().item()
    assert 1e-4 < err < 1e-1  # TF32: ~1e-3 relative per product, a 32-term sum of O(1) products


def test_tf32x3_recovers_about_fp32_accuracy_and_ieee_stays_exact_fp32():
    c3, exact = _dot(1)
    ci, _ = _dot(2)
    assert (c3.double() - exact).abs().max().item() < 1e-4
    assert (ci.double() - exact).abs().max().item() < 1e-5


def test_tl_dot_rounding_equals_exact_products_of_rounded_operands():
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(32, 32, generator=gen), torch.randn(32, 32, generator=gen)
    c = torch.empty(32, 32)
    _dot_kernel[(1,)](a, b, c, PRECISION=0)
    at, bt = (torch.from_numpy(gpu_numerics.tf32_truncate(t.numpy())) for t in (a, b))
    torch.testing.assert_close(c, at @ bt, atol=1e-5, rtol=1e-5)


@triton.jit
def _order_kernel(counter_ptr, order_ptr):
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(order_ptr + ticket, tl.program_id(0) * 4 + tl.program_id(1))


def _program_order(order_seed):
    counter, order = torch.zeros(1, dtype=torch.int32), torch.full((32,), -1, dtype=torch.int32)
    with gpu_numerics.trial(order_seed=order_seed) as report:
        _order_kernel[(8, 4)](counter, order)
    assert report.races == []
    return order.tolist()


def test_programs_run_in_pid_order_by_default_and_in_a_secret_permutation_in_a_shuffled_trial():
    assert _program_order(None) == list(range(32))
    shuffled = _program_order(12345)
    assert sorted(shuffled) == list(range(32)) and shuffled != list(range(32))
    assert _program_order(12345) == shuffled  # the same secret seed, the same order
    assert _program_order(999) != shuffled


@triton.jit
def _overlap_kernel(out_ptr, SAME: tl.constexpr):
    offs = tl.program_id(0) * 8 + tl.arange(0, 16)  # each program also writes the next one's first 8
    value = offs.to(tl.float32) if SAME else (offs + tl.program_id(0)).to(tl.float32)
    tl.store(out_ptr + offs, value, mask=offs < 40)


@triton.jit
def _atomic_kernel(out_ptr):
    tl.atomic_add(out_ptr + tl.arange(0, 4), 1.0)


def test_two_programs_storing_different_values_to_one_element_is_a_named_race():
    with gpu_numerics.trial() as report:
        _overlap_kernel[(4,)](torch.zeros(40), SAME=False)
    assert len(report.races) == 1
    assert report.races[0].startswith("kernel `_overlap_kernel`: 24 output element(s) were stored by two programs of "
                                      "the same launch with different values (e.g. programs 0 and 1)")


def test_identical_values_from_two_programs_and_atomics_are_not_races():
    with gpu_numerics.trial() as report:
        _overlap_kernel[(4,)](torch.zeros(40), SAME=True)
        _atomic_kernel[(6,)](torch.zeros(4))
    assert report.races == [] and report.launches == 2


def test_outside_a_trial_nothing_is_recorded():
    out = torch.zeros(40)
    _overlap_kernel[(4,)](out, SAME=False)  # pid order: the later program wins, as before
    assert out[8:16].tolist() == [float(i + 1) for i in range(8, 16)]


@triton.jit
def _overlap_line(out_ptr, n, SAME: tl.constexpr):
    offs = tl.program_id(0) * 8 + tl.arange(0, 16)  # each program also writes the next one's first 8
    value = offs.to(tl.float32) if SAME else (offs + tl.program_id(0)).to(tl.float32)
    tl.store(out_ptr + offs, value, mask=offs < n)


@pytest.mark.parametrize("same", [False, True])
def test_the_gpu_shape_samplers_programs_storing_different_values_to_one_element_are_a_named_race(same):
    # the sampled replay runs a few programs of the grid by hand (replay/sampled.py), not through the launch a trial
    # wraps: its programs' stores are raced all the same (red team a252: a program run after the sample overwrote
    # the zeros the sampled programs stored); programs 0 and 1 (a corner and a probe) always run, and overlap
    from environment.evaluation.modeled import triton_hooks
    from environment.evaluation.modeled.counting import CostCounter
    from environment.evaluation.replay.sampled import run_sampled
    triton_hooks.install()
    counter = CostCounter(lifts_are_copies=True, sample_seed=3, sampler=run_sampled)
    with torch.no_grad(), counter:
        _overlap_line[(2048,)](torch.zeros(8 * 2048), 8 * 2048, SAME=same)   # past line_grid.EXACT_LINE
    assert counter.records[-1]["sampled_programs"] < 2048
    if same:
        assert counter.write_races == [] and "write_races" not in counter.report(outputs=[])
    else:
        assert len(counter.write_races) == 1 and counter.write_races[0].startswith(
            "kernel `_overlap_line`: ") and "programs 0 and 1" in counter.write_races[0]
        assert counter.report(outputs=[])["write_races"] == counter.write_races


@triton.jit
def _exchange(slots_ptr, new_ptr, old_ptr):
    i = tl.arange(0, 4)
    tl.store(old_ptr + i, tl.atomic_xchg(slots_ptr + i, tl.load(new_ptr + i)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_atomic_exchange_of_floats_swaps_their_bits_as_sm_90_does(dtype):
    # the interpreter's native atomics refused a float exchange ("Unsupported data type"): an honest kernel storing
    # its partial results with tl.atomic_xchg was judged wrong
    slots = torch.tensor([1.5, -2.0, float("inf"), 0.0]).to(dtype)
    new = torch.tensor([3.25, float("nan"), -0.0, 7.0]).to(dtype) if dtype.is_floating_point else \
        torch.tensor([3, -4, 0, 7], dtype=dtype)
    old = torch.empty_like(slots)
    before = slots.clone()
    _exchange[(1,)](slots, new, old)
    assert torch.equal(old, before)
    assert slots.view(torch.uint8).tolist() == new.view(torch.uint8).tolist()   # bit for bit (NaN, -0.0)
