"""Record the trace of one forward call inside the candidate child (untrusted side).

Nothing recorded here is believed: the trace is a *claim* that the trusted replayer re-executes on
inputs this process never sees. A submission that switches the recorder off, forges its records or
works around it only makes its own trace wrong, and a wrong trace earns nothing (or is a hack).

    with TraceRecorder(inputs) as rec:
        out = model(*inputs)
    trace, constants = rec.finish(outputs)

Aten ops are recorded (and run) through a TorchDispatchMode; Triton launches through a wrapper of
the interpreter's GridExecutor, recorded with their grid. What a grid function does is not
recorded: the launch step stands for the kernel alone. Launches inside autotune benchmarking run
(they pick the config) and are not part of the call.

Every judged call of the candidate runs under a recorder that also *runs* its launches
(`run_launches`): the trials (their trace is dropped) and the counted call (its trace is priced, its
outputs judged like a trial's), so the call whose program is priced is, to the submission, one more
judged call. Only the GPU-shape call records launches without running them (interpreting every
program there would take minutes; what it claims is priced no higher than the model shape's).
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from environment.evaluation.replay.trace import (MAX_CONSTANT_BYTES, MAX_CONSTANTS, MAX_LIST, MAX_STEPS, MAX_STORAGES, AtenStep,
                                                 LaunchStep, Special, Storage, TensorRef, Trace)

_ACTIVE: list["TraceRecorder"] = []
_INSTALLED = False
# metadata queries: no kernel, nothing to replay
_SKIP = {"sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "record_stream",
         "_has_compatible_shallow_copy_type", "is_nonzero"}
_HOST_READS = {"_local_scalar_dense", "item", "is_nonzero", "equal"}


class Unreplayable(Exception):
    pass


class TraceRecorder(TorchDispatchMode):
    def __init__(self, inputs: list[torch.Tensor], run_launches: bool = False) -> None:
        """run_launches: launches run as well as being recorded (every judged call; see the module
        docstring: a trial's recorder does all a counted call's does, its trace is only dropped)."""
        super().__init__()
        self.run_launches = run_launches
        self._by_ptr: dict[int, tuple[int, torch.UntypedStorage]] = {}  # holds storages: no address reuse
        self.storages: list[Storage] = []
        self.steps: list[Any] = []
        self.constants: list[torch.Tensor] = []
        self.constant_bytes = 0
        self.paused = 0           # > 0 inside a launch or an autotune benchmark
        self.host_reads = 0
        self.unreplayable: Optional[str] = None
        for i, t in enumerate(inputs):
            self._register(t.untyped_storage(), "input", i)

    # --- storages and values -----------------------------------------------------------------
    def _register(self, storage: torch.UntypedStorage, source: str, index: int) -> int:
        sid = len(self.storages)
        if sid >= MAX_STORAGES:
            raise Unreplayable(f"more than {MAX_STORAGES} distinct storages")
        self.storages.append(Storage(id=sid, nbytes=storage.nbytes(), source=source, index=index))
        if storage.nbytes():
            self._by_ptr[storage.data_ptr()] = (sid, storage)
        return sid

    def _storage_id(self, t: torch.Tensor) -> int:
        storage = t.untyped_storage()
        known = self._by_ptr.get(storage.data_ptr()) if storage.nbytes() else None
        if known is not None and known[1].nbytes() >= storage.nbytes():
            return known[0]
        # memory that no traced step produced: a constant the call holds (a parameter, a table)
        self.constant_bytes += storage.nbytes()
        if self.constant_bytes > MAX_CONSTANT_BYTES:
            raise Unreplayable(f"the call reads more than {MAX_CONSTANT_BYTES >> 20} MiB of constant tensors")
        if len(self.constants) >= MAX_CONSTANTS:
            raise Unreplayable(f"the call reads more than {MAX_CONSTANTS} distinct constant tensors")
        self.paused += 1
        try:
            copy = torch.empty(storage.nbytes(), dtype=torch.uint8)
            copy.untyped_storage().copy_(storage)
        finally:
            self.paused -= 1
        self.constants.append(copy)
        return self._register(storage, "constant", len(self.constants) - 1)

    def ref(self, t: torch.Tensor) -> TensorRef:
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.device.type != "cpu" or t.is_sparse or t.layout != torch.strided:
            raise Unreplayable(f"a {type(t).__name__} on {t.device} with layout {t.layout} cannot be replayed")
        return TensorRef(storage=self._storage_id(t), dtype=str(t.dtype).split(".")[-1], size=list(t.shape),
                         stride=list(t.stride()), offset=t.storage_offset())

    def encode(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return self.ref(value)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str) and len(value) <= 64:
            return value
        if isinstance(value, (list, tuple)):
            if len(value) > MAX_LIST:
                raise Unreplayable(f"an argument list longer than {MAX_LIST}")
            return [self.encode(v) for v in value]
        if isinstance(value, torch.dtype):
            return Special(kind="dtype", name=str(value).split(".")[-1])
        if isinstance(value, torch.device):
            return Special(kind="device", name=str(value))
        if isinstance(value, torch.layout):
            return Special(kind="layout", name=str(value).split(".")[-1])
        if isinstance(value, torch.memory_format):
            return Special(kind="memory_format", name=str(value).split(".")[-1])
        name = getattr(value, "name", None)
        if isinstance(name, str) and type(value).__module__.startswith("triton.language"):
            return Special(kind="tl_dtype", name=name)
        raise Unreplayable(f"an argument of type {type(value).__name__} cannot be replayed")

    # --- aten ----------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.paused or self.unreplayable:
            return func(*args, **kwargs)
        base = func._schema.name.split("::", 1)[-1]
        if base in _HOST_READS:
            self.host_reads += 1
        if base in _SKIP or base in _HOST_READS:
            return func(*args, **kwargs)
        try:
            if func.namespace != "aten":
                raise Unreplayable(f"{func} is not an aten operator (custom operators cannot be replayed)")
            enc_args, enc_kwargs = self.encode(list(args)), {k: self.encode(v) for k, v in kwargs.items()}
        except Unreplayable as exc:
            self.unreplayable = str(exc)
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        leaves = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        fresh = [(i, t) for i, t in enumerate(leaves)
                 if not (t.untyped_storage().nbytes() and t.untyped_storage().data_ptr() in self._by_ptr)]
        if func.is_view and not fresh:
            return out  # a view of known memory: geometry travels with each use
        try:
            creates = [(i, self._register(t.untyped_storage(), "step", len(self.steps))) for i, t in fresh]
            self._append(AtenStep(op=str(func), args=enc_args, kwargs=enc_kwargs, creates=creates))
        except Unreplayable as exc:
            self.unreplayable = str(exc)
        return out

    def _append(self, step: Any) -> None:
        if len(self.steps) >= MAX_STEPS:
            raise Unreplayable(f"more than {MAX_STEPS} steps")
        self.steps.append(step)

    # --- Triton --------------------------------------------------------------------------------
    def launch(self, executor, args, kwargs, run) -> Any:
        """Record the launch, and run it when `run_launches`. Otherwise (the GPU-shape call) memory the
        call created and the launch gets is zeroed instead, so host code after it sees defined (if
        meaningless) values."""
        if self.paused or self.unreplayable:
            return run()
        try:
            enc_args = self.encode(list(args))
            enc_kwargs = {k: self.encode(v) for k, v in kwargs.items()}
        except Unreplayable as exc:
            self.unreplayable = f"launch of {executor.fn.__name__}: {exc}"
            return run()
        self.paused += 1  # a grid function's own work is not part of the trace
        try:
            grid = _grid_of(executor, args, kwargs)
            for t in [*args, *kwargs.values()] if not self.run_launches else []:
                if isinstance(t, torch.Tensor) and self._created(t):
                    torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage()).zero_()
        except Exception as exc:  # the grid function failed: run it for real so the error is the submission's
            self.paused -= 1
            self.unreplayable = f"launch of {executor.fn.__name__}: its grid could not be evaluated ({exc})"
            return run()
        self.paused -= 1
        try:
            self._append(LaunchStep(kernel=executor.fn.__name__, grid=grid, args=enc_args, kwargs=enc_kwargs))
        except Unreplayable as exc:
            self.unreplayable = str(exc)
        if not self.run_launches:
            return None
        self.paused += 1  # the kernel's own work is the launch step
        try:
            return run()
        finally:
            self.paused -= 1

    def _created(self, t: torch.Tensor) -> bool:
        """Memory a traced step of this call created (not an input, not a constant)."""
        known = self._by_ptr.get(t.untyped_storage().data_ptr()) if t.untyped_storage().nbytes() else None
        return known is not None and self.storages[known[0]].source == "step"

    # --- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> "TraceRecorder":
        install()
        _ACTIVE.append(self)
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        _ACTIVE.remove(self)

    def finish(self, outputs: list[torch.Tensor]) -> tuple[Trace, list[torch.Tensor]]:
        refs = []
        try:
            refs = [self.ref(o) for o in outputs]
        except Unreplayable as exc:
            self.unreplayable = self.unreplayable or str(exc)
        trace = Trace(storages=self.storages, steps=self.steps, outputs=refs, host_reads=self.host_reads,
                      unreplayable=self.unreplayable)
        return trace, self.constants


def _grid_of(executor, args, kwargs) -> tuple[int, int, int]:
    """The grid a launch would run, computed as the interpreter's GridExecutor does."""
    import inspect
    spec = inspect.getfullargspec(executor.fn)
    passed = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
    call_args = inspect.getcallargs(executor.fn, *args, **passed)
    grid = executor.grid(call_args) if callable(executor.grid) else executor.grid
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"a grid of {len(grid)} dimensions")
    return grid + (1,) * (3 - len(grid))


def active() -> Optional[TraceRecorder]:
    return _ACTIVE[-1] if _ACTIVE else None


class paused:
    """Launches and ops inside are not part of the call (autotune benchmarking)."""

    def __enter__(self):
        self.rec = active()
        if self.rec is not None:
            self.rec.paused += 1

    def __exit__(self, *exc):
        if self.rec is not None:
            self.rec.paused -= 1


def install() -> None:
    """Wrap the interpreter's launch and grid entry points once per process."""
    global _INSTALLED
    if _INSTALLED:
        return
    import triton.runtime.interpreter as interp

    call = interp.GridExecutor.__call__

    @functools.wraps(call)
    def hooked_call(self, *args, **kwargs):
        rec = active()
        if rec is None:
            return call(self, *args, **kwargs)
        return rec.launch(self, args, kwargs, lambda: call(self, *args, **kwargs))

    interp.GridExecutor.__call__ = hooked_call
    _INSTALLED = True
