"""Start-up self-test of the counters: known kernels must give known counts, or modeled scoring
is off (flags.MODELED_UNAVAILABLE) and the observation says why. Run once per process."""
from __future__ import annotations

import triton
import triton.language as tl
import torch

from environment.evaluation.modeled.counting import CostCounter

N = 1 << 20                     # 1M fp32 elements
BLOCK = 4096
VECTOR_ADD_BYTES = 3 * 4 * N    # read x, read y, write out: 12,582,912 bytes
DOT = 32                        # one 32x32x32 fp16 tl.dot: 2*32^3 FLOPs


@triton.jit
def _vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, S: tl.constexpr):
    idx = tl.arange(0, S)
    a = tl.load(a_ptr + idx[:, None] * S + idx[None, :])
    b = tl.load(b_ptr + idx[:, None] * S + idx[None, :])
    tl.store(c_ptr + idx[:, None] * S + idx[None, :], tl.dot(a, b))


def _count(fn, outputs_of):
    counter = CostCounter()
    with counter:
        out = fn()
    return counter.report(outputs_of(out))


def _expect(failures: list[str], what: str, got, want) -> None:
    if got != want:
        failures.append(f"{what}: got {got!r}, expected {want!r}")


def self_test() -> tuple[bool, str]:
    """(ok, detail). Never raises: a failure to run is a failed self-test."""
    failures: list[str] = []
    try:
        gen = torch.Generator().manual_seed(0)
        x, y = torch.randn(N, generator=gen), torch.randn(N, generator=gen)
        out = torch.empty_like(x)
        rep = _count(lambda: _vector_add[(triton.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK), lambda _: [out])
        launches = rep["launches"]
        _expect(failures, "triton vector add launches", len(launches), 1)
        if launches:
            _expect(failures, "triton vector add programs", launches[0]["programs"], N // BLOCK)
            _expect(failures, "triton vector add unique bytes", launches[0]["bytes_unique"], VECTOR_ADD_BYTES)
            _expect(failures, "triton vector add sector bytes", launches[0]["bytes_sectors"], VECTOR_ADD_BYTES)
            _expect(failures, "triton vector add fp32 ops", launches[0]["flops"].get("fp32"), float(N))
        _expect(failures, "triton vector add provenance", rep["provenance"], 1.0)
        _expect(failures, "triton vector add results", bool(torch.equal(out, x + y)), True)

        rep = _count(lambda: x + y, lambda o: [o])
        _expect(failures, "aten vector add launches", [r["name"] for r in rep["launches"]], ["aten.add.Tensor"])
        if rep["launches"]:
            _expect(failures, "aten vector add unique bytes", rep["launches"][0]["bytes_unique"], VECTOR_ADD_BYTES)

        a = torch.randn(DOT, DOT, generator=gen).half()
        b = torch.randn(DOT, DOT, generator=gen).half()
        c = torch.empty(DOT, DOT, dtype=torch.float32)
        rep = _count(lambda: _dot[(1,)](a, b, c, S=DOT), lambda _: [c])
        if rep["launches"]:
            _expect(failures, "tl.dot fp16 FLOPs", rep["launches"][0]["flops"].get("dot_fp16"), 2.0 * DOT ** 3)
        else:
            failures.append("tl.dot: no launch counted")
    except Exception as exc:  # the self-test's boundary: any failure turns modeled scoring off
        failures.append(f"self-test raised {type(exc).__name__}: {exc}")
    if failures:
        return False, ("modeled-time self-test failed (is TRITON_INTERPRET=1 set before triton is imported?): "
                       + "; ".join(failures))
    return True, (f"modeled-time self-test passed: 1M fp32 vector add = {VECTOR_ADD_BYTES:,} bytes, "
                  f"1 launch of {N // BLOCK} programs at BLOCK {BLOCK}")
