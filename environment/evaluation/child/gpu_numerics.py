"""Make the Triton interpreter behave like an H100 where its differences would change a verdict.

Installed in the candidate child on CPU hosts (before the sandbox); the trusted evaluator reads
what it reports. Three differences are closed:

1. `tl.dot` precision. The interpreter multiplies fp32 operands exactly (numpy) whatever
   `input_precision` says; on sm_90 the default (`"tf32"`) feeds raw fp32 bits to the tensor cores,
   which ignore the low 13 mantissa bits (truncation: triton-lang/triton#4574), and `"tf32x3"`
   splits each operand into a big part (`cvt.rna.tf32.f32`: round to nearest, ties away from zero)
   and a small remainder and sums three TF32 products (big*big + big*small + small*big, the
   small*small term dropped: triton-lang/triton#4603). Here operands are rounded the same way and
   multiplied exactly in fp32, so the products are what the tensor cores compute; accumulation order
   is not modelled (both accumulate in fp32). `"ieee"` stays exact.
2. Program order. The interpreter runs a launch's programs one after another in pid order, which
   repairs races a GPU would expose. Inside `trial(order_seed=...)` every launch runs its programs
   in a random order drawn from that (secret) seed: the loop of `GridExecutor.__call__` is left as
   it is and `set_grid_idx` maps the i-th program it starts to the i-th entry of a permutation.
3. Write-write races. Inside `trial()` every element a program stores is recorded (address, value
   bits, program); at the end of the launch an element stored by two programs with different values
   is a race: on a GPU the last writer is arbitrary. Identical values (e.g. a tail block shifted back
   over its neighbour) are order-independent and not reported. Atomics are not stores and are
   exempt. Element granularity: overlapping stores of different widths are not compared, and a
   launch storing more than MAX_RECORDED_STORES elements is not checked (far beyond any trial).

The hooks wrap and call through whatever is installed (the modeled-cost counters wrap the same
methods), so either may be installed first. With no trial active only the dot rounding runs.

4. Narrow operands. The interpreter keeps bf16 as raw 16-bit patterns and its `tl.dot` multiplied
   those patterns as integers; a bf16 operand is now converted exactly to fp32 and the products
   (exact in fp32) are accumulated in fp32, as the tensor cores do. fp16 and fp8 (e4m3 `float8e4nv`,
   e5m2 `float8e5`) operands already converted exactly. The interpreter's fp32 -> bf16 cast truncated;
   it now rounds to nearest even, as `.to(tl.bfloat16)` does on sm_90; its fp32 -> fp8 (e4m3, e5m2) rounding
   carried into the exponent by OR (1.9375 -> 1.0): it now rounds to nearest even and saturates (`satfinite`).
"""
from __future__ import annotations

import contextlib
import functools
import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np

# Stores recorded per launch before race checking gives up on it (bounds memory and time).
MAX_RECORDED_STORES = 8_000_000
_INSTALLED = False


def tf32_truncate(x: np.ndarray) -> np.ndarray:
    """fp32 -> TF32 as the tensor cores read raw fp32 bits: the low 13 mantissa bits are ignored."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32)


def tf32_round(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32: round to nearest at 10 mantissa bits, ties away from zero; Inf/NaN kept."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return np.where(special, bits, rounded).view(np.float32)


def bf16_to_fp32(bits: np.ndarray) -> np.ndarray:
    """bf16 (the interpreter keeps its raw 16-bit patterns) -> fp32: exact, the pattern is fp32's high half."""
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def fp32_to_bf16(x: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 bit patterns as `cvt.rn.bf16.f32` (Triton's `.to(tl.bfloat16)` on sm_90): round to nearest,
    ties to even; NaN stays NaN (quieted), Inf stays Inf."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return np.where(nan, (bits >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def fp32_to_fp8(x: np.ndarray, torch_name: str, max_normal: float) -> np.ndarray:
    """fp32 -> fp8 bit patterns as `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (Triton's `.to(tl.float8e4nv)` /
    `.to(tl.float8e5)` on sm_90): round to nearest even, finite overflow and Inf saturate, NaN stays NaN."""
    import torch  # the child and the replayer have it loaded; torch's fp8 conversion rounds to nearest even

    values = np.clip(np.ascontiguousarray(x, dtype=np.float32), -max_normal, max_normal)  # NaN passes through
    return torch.from_numpy(values).to(getattr(torch, torch_name)).view(torch.uint8).numpy().reshape(np.shape(x))


def dot_products(a: np.ndarray, b: np.ndarray, precision: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (lhs, rhs) pairs whose fp32 products sum to an sm_90 `tl.dot` of fp32 operands."""
    mode = precision.upper()
    if mode == "TF32":
        return [(tf32_truncate(a), tf32_truncate(b))]
    if mode == "TF32X3":
        a_big, b_big = tf32_round(a), tf32_round(b)
        a_small = tf32_truncate(np.asarray(a, np.float32) - a_big)
        b_small = tf32_truncate(np.asarray(b, np.float32) - b_big)
        return [(a_small, b_big), (a_big, b_small), (a_big, b_big)]
    if mode in ("BF16X3", "BF16X6"):   # fp32 split into three bf16 terms (hi + mid + lo), summed in fp32
        (a_hi, a_mid, a_lo), (b_hi, b_mid, b_lo) = _bf16_terms(a), _bf16_terms(b)
        small = [(a_lo, b_hi), (a_hi, b_lo), (a_mid, b_mid)] if mode == "BF16X6" else []
        return small + [(a_mid, b_hi), (a_hi, b_mid), (a_hi, b_hi)]
    return [(a, b)]


def _bf16_terms(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """fp32 x as hi + mid + lo, each exactly a bf16 value (round to nearest even at each step), as fp32."""
    x = np.asarray(x, np.float32)
    hi = bf16_to_fp32(fp32_to_bf16(x))
    mid = bf16_to_fp32(fp32_to_bf16(x - hi))
    return hi, mid, bf16_to_fp32(fp32_to_bf16(x - hi - mid))


@dataclass
class _Launch:
    name: str
    grid: tuple[int, int, int] = (1, 1, 1)
    order: Optional[np.ndarray] = None
    started: int = 0
    addrs: list = field(default_factory=list)
    values: list = field(default_factory=list)
    programs: list = field(default_factory=list)
    recorded: int = 0


@dataclass
class TrialReport:
    """What one trial's launches did that a GPU would not forgive."""
    order_seed: Optional[int] = None
    launches: int = 0
    races: list[str] = field(default_factory=list)
    _current: Optional[_Launch] = None


_TRIAL: Optional[TrialReport] = None


@contextlib.contextmanager
def trial(order_seed: Optional[int] = None) -> Iterator[TrialReport]:
    """Record races (and, with an order seed, shuffle program order) for the launches inside."""
    global _TRIAL
    report = TrialReport(order_seed=order_seed)
    previous, _TRIAL = _TRIAL, report
    try:
        yield report
    finally:
        _TRIAL = previous


@contextlib.contextmanager
def stores_recorded(name: str, grid: tuple[int, int, int]) -> Iterator[TrialReport]:
    """Record the stores of one launch's programs run inside (by hand: the GPU-shape sampler runs a sample of them,
    replay/sampled.py) and report, on leaving, an element two of them stored with different values, as trial()
    does for a whole launch. A no-op where the hooks are not installed (a CUDA host never replays)."""
    global _TRIAL
    report = TrialReport()
    launch = _Launch(name=name, grid=tuple(int(g) for g in grid))
    report._current = launch
    previous, _TRIAL = _TRIAL, report
    try:
        yield report
    finally:
        _TRIAL = previous
        _finish(report, launch)


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Stores made inside are no program of the launch recorded (the dependency closure running an earlier
    launch's programs before a probe of this one: replay/sampled.py)."""
    global _TRIAL
    previous, _TRIAL = _TRIAL, None
    try:
        yield
    finally:
        _TRIAL = previous


def _linear(grid: tuple[int, int, int], idx: tuple[int, int, int]) -> int:
    return (idx[0] * grid[1] + idx[1]) * grid[2] + idx[2]


def _begin(executor) -> Optional[_Launch]:
    report = _TRIAL
    if report is None:
        return None
    fn = getattr(executor, "fn", None)
    launch = _Launch(name=getattr(fn, "__name__", "kernel"))
    report._current = launch
    report.launches += 1
    return launch


def _finish(report: TrialReport, launch: _Launch) -> None:
    report._current = None
    if launch.recorded > MAX_RECORDED_STORES or not launch.addrs:
        return
    addrs = np.concatenate(launch.addrs)
    values = np.concatenate(launch.values)
    programs = np.concatenate(launch.programs)
    order = np.lexsort((programs, addrs))
    addrs, values, programs = addrs[order], values[order], programs[order]
    clash = (addrs[1:] == addrs[:-1]) & (programs[1:] != programs[:-1]) & (values[1:] != values[:-1])
    if clash.any():
        first = int(np.argmax(clash))
        elements = int(np.unique(addrs[1:][clash]).size)
        report.races.append(
            f"kernel `{launch.name}`: {elements} output element(s) were stored by two programs of the same launch "
            f"with different values (e.g. programs {int(programs[first])} and {int(programs[first + 1])}); on a GPU "
            "programs run concurrently in any order, so which value lands is arbitrary. Give every output element "
            "to exactly one program (check the store mask and the offsets), or use tl.atomic_* for updates that "
            "are meant to be shared")


def _record_store(builder, ptrs, value, mask) -> None:
    report = _TRIAL
    launch = report._current if report is not None else None
    if launch is None or launch.recorded > MAX_RECORDED_STORES:
        return
    p = np.asarray(ptrs.data)
    m = np.broadcast_to(np.asarray(mask.data, dtype=bool), p.shape)
    v = np.broadcast_to(np.asarray(value.data), p.shape)
    addrs = p[m].astype(np.uint64, copy=False).ravel()
    if addrs.size == 0:
        return
    width = v.dtype.itemsize
    bits = np.ascontiguousarray(v[m]).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])
    launch.recorded += addrs.size
    if launch.recorded > MAX_RECORDED_STORES:
        launch.addrs, launch.values, launch.programs = [], [], []
        return
    launch.addrs.append(addrs)
    launch.values.append(bits.astype(np.uint64).ravel())
    launch.programs.append(np.full(addrs.size, _linear(launch.grid, builder.grid_idx), dtype=np.int64))


def install() -> None:
    """Install the hooks once per process (idempotent). Requires TRITON_INTERPRET=1."""
    global _INSTALLED
    if _INSTALLED:
        return
    import triton.language as tl
    import triton.runtime.interpreter as interp

    from environment.evaluation.modeled import nested_jit, tree_combine
    nested_jit.install(interp)  # jit helpers called from a kernel do not re-patch the language (speed only)
    tree_combine.install(interp)  # custom-combine reductions and scans run on slices, not per element (speed only)
    builder_cls = interp.InterpreterBuilder
    create_dot = builder_cls.create_dot
    # sm_90 also admits bf16x3 and bf16x6 (triton/backends/nvidia/compiler.py); the interpreter's one builder does not
    options = interp.interpreter_builder.options
    interp.interpreter_builder.options = dataclasses.replace(options, allowed_dot_input_precisions=tuple(
        dict.fromkeys((*options.allowed_dot_input_precisions, "bf16x3", "bf16x6"))))

    @functools.wraps(create_dot)
    def rounded_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        mode = getattr(input_precision, "name", str(input_precision or "IEEE")).upper()
        if tl.bfloat16 in (a.dtype.scalar, b.dtype.scalar):
            # the interpreter would multiply bf16's raw 16-bit patterns as integers: convert exactly to fp32
            # and multiply there (bf16 x bf16 products are exact in fp32), accumulating in fp32 as the tensor
            # cores do. The call through with the operands as given charges the dot (modeled counters).
            create_dot(self, a, b, interp.TensorHandle(np.zeros_like(d.data), d.dtype.scalar), input_precision,
                       max_num_imprecise_acc)
            x, y = (bf16_to_fp32(t.data) if t.dtype.scalar == tl.bfloat16 else t.data.astype(np.float32)
                    for t in (a, b))
            return interp.TensorHandle((np.matmul(x, y, dtype=np.float32) + d.data).astype(d.data.dtype),
                                       d.dtype.scalar)
        if mode == "IEEE" or a.dtype.scalar != tl.float32 or b.dtype.scalar != tl.float32:
            return create_dot(self, a, b, d, input_precision, max_num_imprecise_acc)
        pairs = dot_products(a.data, b.data, mode)
        *corrections, (a_main, b_main) = pairs
        acc = d
        if corrections:  # tf32x3, bf16x3/x6: the small products first, then the big one through the original dot
            extra = sum(np.matmul(x, y, dtype=np.float32) for x, y in corrections)
            acc = interp.TensorHandle((d.data + extra).astype(d.data.dtype), d.dtype.scalar)
        return create_dot(self, interp.TensorHandle(a_main, a.dtype.scalar), interp.TensorHandle(b_main, b.dtype.scalar),
                          acc, input_precision, max_num_imprecise_acc)

    builder_cls.create_dot = rounded_dot

    cast_impl, fp_to_fp = builder_cls.cast_impl, builder_cls.create_fp_to_fp

    @functools.wraps(cast_impl)
    def cast(self, src, dst_type):  # the interpreter truncates fp32 -> bf16; sm_90 rounds to nearest even
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return interp.TensorHandle(fp32_to_bf16(src.data), tl.bfloat16)
        return cast_impl(self, src, dst_type)

    fp8 = {tl.float8e4nv: ("float8_e4m3fn", 448.0), tl.float8e5: ("float8_e5m2", 57344.0)}

    @functools.wraps(fp_to_fp)
    def to_fp(self, src, dst_type, rounding_mode):
        nearest = getattr(rounding_mode, "name", "RTNE") == "RTNE"
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16 and nearest:
            return interp.TensorHandle(fp32_to_bf16(src.data), tl.bfloat16)
        if src.dtype.scalar == tl.float32 and dst_type.scalar in fp8 and nearest:
            # the interpreter's rounding carried into the exponent by OR (1.9375 -> 1.0, 7.75 -> 4.0)
            return interp.TensorHandle(fp32_to_fp8(src.data, *fp8[dst_type.scalar]), dst_type.scalar)
        return fp_to_fp(self, src, dst_type, rounding_mode)

    builder_cls.cast_impl, builder_cls.create_fp_to_fp = cast, to_fp

    set_grid_dim, set_grid_idx = builder_cls.set_grid_dim, builder_cls.set_grid_idx

    @functools.wraps(set_grid_dim)
    def grid_dim(self, nx, ny, nz):
        set_grid_dim(self, nx, ny, nz)
        report = _TRIAL
        launch = report._current if report is not None else None
        if launch is not None:
            launch.grid = (int(nx), int(ny), int(nz))
            launch.started = 0
            if report.order_seed is not None:
                rng = np.random.default_rng([report.order_seed & (2**63 - 1), report.launches])
                launch.order = rng.permutation(int(nx) * int(ny) * int(nz))

    @functools.wraps(set_grid_idx)
    def grid_idx(self, x, y, z):
        report = _TRIAL
        launch = report._current if report is not None else None
        if launch is not None and launch.order is not None:
            _, ny, nz = launch.grid
            k = int(launch.order[launch.started])
            launch.started += 1
            x, y, z = k // (ny * nz), (k // nz) % ny, k % nz
        set_grid_idx(self, x, y, z)

    builder_cls.set_grid_dim, builder_cls.set_grid_idx = grid_dim, grid_idx

    rmw = builder_cls.create_atomic_rmw
    xchg = interp._ir.ATOMIC_OP.XCHG
    bits = {np.dtype(np.float32): (np.int32, tl.int32), np.dtype(np.float64): (np.int64, tl.int64)}

    @functools.wraps(rmw)
    def float_exchange(self, op, ptr, val, mask, sem, scope):
        # sm_90 exchanges a 32- or 64-bit float as its bits (atom.exch.b32/b64); the interpreter's native atomics
        # refuse a float exchange ("Unsupported data type"), which judged an honest kernel wrong
        as_bits = bits.get(val.data.dtype) if op == xchg else None
        if as_bits is None:
            return rmw(self, op, ptr, val, mask, sem, scope)
        old = rmw(self, op, ptr, interp.TensorHandle(val.data.view(as_bits[0]), as_bits[1]), mask, sem, scope)
        return interp.TensorHandle(old.data.view(val.data.dtype), val.dtype.scalar)

    builder_cls.create_atomic_rmw = float_exchange

    masked_store = builder_cls.create_masked_store

    @functools.wraps(masked_store)
    def recorded_store(self, ptrs, value, mask, cache_policy):
        _record_store(self, ptrs, value, mask)
        return masked_store(self, ptrs, value, mask, cache_policy)

    builder_cls.create_masked_store = recorded_store

    executor_call = interp.GridExecutor.__call__

    @functools.wraps(executor_call)
    def launch_call(self, *args, **kwargs):
        launch = _begin(self)
        if launch is None:
            return executor_call(self, *args, **kwargs)
        report = _TRIAL
        try:
            return executor_call(self, *args, **kwargs)
        finally:
            _finish(report, launch)

    interp.GridExecutor.__call__ = launch_call
    _INSTALLED = True
