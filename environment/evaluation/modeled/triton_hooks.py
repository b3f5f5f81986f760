"""Hooks on the Triton interpreter that report every memory access, operation, program and launch
to the innermost active counter (a *sink*).

Where the hooks sit, and why there: every memory access of the interpreter funnels through four
functions of its module-global native object (`load`, `store`, `atomic_rmw`, `atomic_cas`), so a
proxy installed as that global sees them all. Arithmetic, dots, programs and launches are hooked on
`InterpreterBuilder`, `ReduceOps`/`ScanOps` and `GridExecutor` classes, because the `tl.*` layer is
re-patched on every launch. Only one level is hooked (e.g. `binary_op`, not the `create_fadd`
lambdas that call it), otherwise work would be counted twice. Signatures are kept intact.
With no sink active every hook is a pass-through.
"""
from __future__ import annotations

import functools

import numpy as np

from environment.evaluation.modeled.precision import tl_dot_precision, tl_element_precision

_SINKS: list = []
_INSTALLED = False


def current():
    return _SINKS[-1] if _SINKS else None


def push(sink) -> None:
    install()
    _SINKS.append(sink)


def pop(sink) -> None:
    assert _SINKS and _SINKS[-1] is sink, "counters must be exited in the reverse order of entry"
    _SINKS.pop()


def _counting():
    """The sink to charge an elementwise operation to, when a program body is running (not inside a
    reduction's combine function: the reduction is charged once per element at its entry)."""
    sink = current()
    if sink is None or sink.launch is None or sink.launch.suppress:
        return None
    return sink


def _counting_always():
    """The sink to charge memory traffic and dots to: *whoever* issues them, a combine function too
    (suppressing them there let a combine function do a whole kernel's loads, dots and stores free)."""
    sink = current()
    if sink is None or sink.launch is None:
        return None
    return sink


class _NativeProxy:
    """Stands in for the interpreter's native module; forwards everything, reports accesses."""

    def __init__(self, native) -> None:
        self._native = native

    def __getattr__(self, name):
        return getattr(self._native, name)

    def load(self, ptrs, mask, other, dtype):
        sink = _counting_always()
        if sink is not None:
            sink.launch.access("read", ptrs, mask, np.dtype(dtype).itemsize)
        return self._native.load(ptrs, mask, other, dtype)

    def _keep_old(self, sink, ptrs, mask, dtype) -> None:
        """A probe of the sampled replay's closure (replay/closure.py) undoes every store: keep what was there."""
        undo = getattr(sink.launch, "undo", None)
        if undo is not None:
            mask = np.ones(np.shape(ptrs), dtype=bool) if mask is None else \
                np.ascontiguousarray(np.broadcast_to(mask, np.shape(ptrs)))
            undo.append((ptrs, self._native.load(ptrs, mask, np.zeros(np.shape(ptrs), dtype=dtype), dtype), mask))

    def store(self, ptrs, value, mask):
        sink = _counting_always()
        if sink is not None:
            sink.launch.access("write", ptrs, mask, value.dtype.itemsize)
            self._keep_old(sink, ptrs, mask, value.dtype)
        return self._native.store(ptrs, value, mask)

    def atomic_rmw(self, op, ptrs, value, mask, sem):
        sink = _counting_always()
        if sink is not None:
            sink.launch.access("atomic", ptrs, mask, value.dtype.itemsize)
            self._keep_old(sink, ptrs, mask, value.dtype)
        return self._native.atomic_rmw(op, ptrs, value, mask, sem)

    def atomic_cas(self, ptrs, cmp, value, sem):
        sink = _counting_always()
        if sink is not None:
            sink.launch.access("atomic", ptrs, None, value.dtype.itemsize)
            self._keep_old(sink, ptrs, None, value.dtype)
        return self._native.atomic_cas(ptrs, cmp, value, sem)


def _after(cls, name, charge, always: bool = False):
    """Wrap cls.name so that charge(sink, result, *args) runs after it while counting (with
    always=True inside a reduction's combine function too). A method this Triton lacks (create_dot_scaled
    before 3.7) is skipped: nothing can call it."""
    original = getattr(cls, name, None)
    if original is None:
        return

    @functools.wraps(original)
    def hooked(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        sink = _counting_always() if always else _counting()
        if sink is not None:
            charge(sink, result, *args, **kwargs)
        return result

    setattr(cls, name, hooked)


def _elementwise(operand_index):
    def charge(sink, result, *args, **kwargs):
        sink.launch.op(tl_element_precision(args[operand_index].dtype), int(np.size(result.data)))
    return charge


def _dot(sink, result, a, b, d, input_precision=None, *rest, **kwargs):
    key, passes = tl_dot_precision(a.dtype, input_precision)
    k = a.data.shape[-1]
    sink.launch.op(key, 2.0 * np.size(result.data) * k * passes)


def _dot_scaled(sink, result, lhs, *args, **kwargs):
    # Scaled dots take fp8/fp4 operands on sm_90+; charged at the fp8 tensor-core rate.
    sink.launch.op("dot_fp8", 2.0 * np.size(result.data) * lhs.data.shape[-1])


def _reduce_entry(cls):
    """Charge a reduction or scan once per element of its input; the combine function it may
    call element by element (the generic path) is not charged again."""
    original = cls.apply

    @functools.wraps(original)
    def hooked(self, input):
        sink = _counting()
        if sink is None:
            return original(self, input)
        first = input[0] if isinstance(input, tuple) else input
        sink.launch.op(tl_element_precision(first.dtype.scalar), int(np.size(first.handle.data)))
        sink.launch.suppress += 1
        try:
            return original(self, input)
        finally:
            sink.launch.suppress -= 1

    cls.apply = hooked


def _grid_executor(cls):
    call, init_args, restore_args = cls.__call__, cls._init_args_hst, cls._restore_args_dev

    @functools.wraps(call)
    def hooked_call(self, *args, **kwargs):
        sink = current()
        if sink is None:
            return call(self, *args, **kwargs)
        return sink.run_launch(self, args, kwargs, call)   # the whole grid, or a sample of it (the sink's choice)

    def bookkeeping(original):
        # Copying arguments to and from the host is the interpreter's own work, not the kernel's.
        @functools.wraps(original)
        def hooked(self, *args, **kwargs):
            sink = current()
            if sink is None or sink.launch is None:
                return original(self, *args, **kwargs)
            previous, sink.launch.phase = sink.launch.phase, "bookkeeping"
            try:
                return original(self, *args, **kwargs)
            finally:
                sink.launch.phase = previous
        return hooked

    cls.__call__ = hooked_call
    cls._init_args_hst = bookkeeping(init_args)
    cls._restore_args_dev = bookkeeping(restore_args)


def install() -> None:
    """Install the hooks once per process (idempotent). Requires TRITON_INTERPRET=1."""
    global _INSTALLED
    if _INSTALLED:
        return
    import triton.runtime.interpreter as interp

    interp._interpreter = _NativeProxy(interp._interpreter)
    from environment.evaluation.modeled import nested_jit
    nested_jit.install(interp)  # jit helpers called from a kernel do not re-patch the language (speed only)
    builder = interp.InterpreterBuilder
    _after(builder, "binary_op", _elementwise(0))
    _after(builder, "unary_op", _elementwise(0))
    _after(builder, "ternary_op", _elementwise(2))
    _after(builder, "create_fma", _elementwise(2))
    for name in ("create_erf", "create_rsqrt", "create_fabs"):  # these bypass unary_op
        _after(builder, name, _elementwise(0))
    _after(builder, "create_dot", _dot, always=True)
    _after(builder, "create_dot_scaled", _dot_scaled, always=True)

    original_set_grid_idx = builder.set_grid_idx

    @functools.wraps(original_set_grid_idx)
    def set_grid_idx(self, x, y, z):
        original_set_grid_idx(self, x, y, z)
        sink = current()
        if sink is not None and sink.launch is not None:
            sink.launch.program()

    builder.set_grid_idx = set_grid_idx
    _reduce_entry(interp.ReduceOps)
    _reduce_entry(interp.ScanOps)
    _grid_executor(interp.GridExecutor)
    _dead_overflow_checks_charged_not_run(interp)
    _INSTALLED = True


def _dead_overflow_checks_charged_not_run(interp) -> None:
    """Triton's integer add, sub and mul build an int64 copy of their result and a bounds check of it, which
    `device_assert` then drops (no debug build): dead code the sm_90 compiler removes, yet numpy work the interpreter
    runs on every integer op, a third of an interpreted GEMM's time (its address arithmetic). The interpreter's
    semantic skips that numpy and charges the counter the four int ops the check charged through `binary_op` (the
    int64 op, two compares, an and; the casts and constants charge nothing), in that order, so every count, price
    and score stays bit for bit what it was. (Whether a model should charge dead code at all is another question:
    these ops are charged as before.)"""
    import triton.language as tl
    semantic = interp.interpreter_semantic
    run_it = semantic.binary_op_sanitize_overflow_impl
    keys = tuple(tl_element_precision(t) for t in (tl.int64, tl.int64, tl.int64, tl.int1))

    def charged(lhs, rhs, binary_op):
        options = semantic.builder.options
        if options.debug:   # the check can fire: run it
            return run_it(lhs, rhs, binary_op)
        if lhs.type.scalar.int_bitwidth >= 64 or not options.sanitize_overflow:
            return None
        assert lhs.type.scalar == rhs.type.scalar, \
            f"expected matching operand types, got {lhs.type.scalar} and {rhs.type.scalar}"
        assert lhs.type.scalar.is_int(), f"expected integer type, got {lhs.type.scalar}"
        sink = _counting()
        if sink is not None:   # operands are broadcast already: the check's ops have the result's size
            n = int(np.size(lhs.handle.data))
            for key in keys:
                sink.launch.op(key, n)
        return None

    semantic.binary_op_sanitize_overflow_impl = charged
