"""Narrow tl.dot operands in the interpreter as on sm_90 (environment/evaluation/child/gpu_numerics.py): bf16, fp16
and fp8 operands convert exactly and accumulate in fp32; fp32 -> bf16 rounds to nearest even; a bf16x3 split
recovers about fp32 accuracy and one bf16 pass does not (precision, not garbage)."""
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


@triton.jit
def _narrow_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


@triton.jit
def _split_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr, SPLIT: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    a_hi, b_hi = a.to(tl.bfloat16), b.to(tl.bfloat16)
    acc = tl.dot(a_hi, b_hi)
    if SPLIT:
        a_lo, b_lo = (a - a_hi.to(tl.float32)).to(tl.bfloat16), (b - b_hi.to(tl.float32)).to(tl.bfloat16)
        acc += tl.dot(a_lo, b_hi) + tl.dot(a_hi, b_lo)
    tl.store(c_ptr + r[:, None] * N + r[None, :], acc)


@triton.jit
def _to_bf16(x_ptr, y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + r, tl.load(x_ptr + r).to(tl.bfloat16))


def _operands(dtype):
    gen = torch.Generator().manual_seed(0)
    return torch.randn(32, 32, generator=gen).to(dtype), torch.randn(32, 32, generator=gen).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2])
def test_narrow_operands_multiply_exactly_and_accumulate_in_fp32(dtype):
    a, b = _operands(dtype)
    c = torch.empty(32, 32)
    _narrow_dot[(1,)](a, b, c, N=32)
    exact = a.double() @ b.double()  # each product is exact in fp32; only the fp32 sum rounds
    assert (c.double() - exact).abs().max().item() < 1e-4 * exact.abs().max().item()


def test_fp32_to_bf16_rounds_to_nearest_even_like_sm90():
    x = torch.tensor([1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, -(1.0 + 2**-8), 3.4e38, float("inf")])
    y = torch.empty(8, dtype=torch.bfloat16)
    _to_bf16[(1,)](torch.cat([x, torch.zeros(2)]), y, N=8)
    assert torch.equal(y[:6], x.to(torch.bfloat16))  # torch's cast is round-to-nearest-even too
    bits = gpu_numerics.fp32_to_bf16(np.array([np.nan], np.float32))
    assert np.isnan(gpu_numerics.bf16_to_fp32(bits))[0]


def test_a_bf16x3_split_recovers_fp32_accuracy_and_one_bf16_pass_misses_it():
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(32, 32, generator=gen), torch.randn(32, 32, generator=gen)
    exact = a.double() @ b.double()
    errs = []
    for split in (True, False):
        c = torch.empty(32, 32)
        _split_dot[(1,)](a, b, c, N=32, SPLIT=split)
        errs.append((c.double() - exact).abs().max().item())
    assert errs[0] < 1e-4  # three bf16 products: ~2^-16 relative per product, fp32-like on a 32-term sum
    assert 1e-3 < errs[1] < 0.5  # bf16's 8 bits: ~4e-3 relative per product; wrong, but near the answer


@triton.jit
def _to_fp8_and_back(x_ptr, y_ptr, N: tl.constexpr, E5: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    y = x.to(tl.float8e5).to(tl.float32) if E5 else x.to(tl.float8e4nv).to(tl.float32)
    tl.store(y_ptr + r, y)


def test_fp32_to_fp8_rounds_to_nearest_even_and_saturates():
    """Red team h23a: the interpreter's fp32 -> fp8 rounding carried into the exponent by OR, so 1.9375 became 1.0
    and 7.75 became 4.0 (an honest fp8 kernel judged wrong where an H100 is right); now as cvt.rn.satfinite."""
    x = torch.tensor([1.0, 1.9375, 3.875, 7.75, 15.5, 0.96875, -1.875, 1e-3, 500.0, -1e9, 2.0**-10, 0.0,
                      1.0625, 1.1875, 3.0, -7.5])
    for e5, name, top in ((False, "float8_e4m3fn", 448.0), (True, "float8_e5m2", 57344.0)):
        y = torch.empty_like(x)
        _to_fp8_and_back[(1,)](x, y, x.numel(), E5=e5)
        expected = x.clamp(-top, top).to(getattr(torch, name)).float()
        assert torch.equal(y, expected), (name, y.tolist(), expected.tolist())
    assert y[1].item() == 2.0 and y[3].item() == 8.0
