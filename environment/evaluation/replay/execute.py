"""Re-execute a trace on the trusted side and count what it does.

Runs in the replayer process (replayer.py), under a CostCounter: aten steps are executed by torch
itself (from an allow-list), Triton steps launch the kernels *rebuilt* from the submission's syntax
tree (rebuild.py), never the submission's own objects. Memory a step allocates is filled with NaN
(or 0x5A bytes for integers) so a read of memory nobody wrote gives a wrong answer, not a lucky one.

Memory the call did not create (a constant of the trace: copied in the child when first seen) is
trusted data only while nothing writes it: a constant a step writes into (an aten op's mutated
argument, any store or atomic of a launch) or the call returns is *state*, prepared outside the
counted call (zeroed in ``__init__``, left by an earlier call), whose preparation nobody charged.
The replay notes such storages (``Replay.state``); the replayer then runs the trace again with them
poisoned like fresh allocations, so a kernel that reads them before writing gets garbage.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import torch
from torch.utils._pytree import tree_leaves

from environment.evaluation.evaluator.inputs import geometry
from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.replay import coverage
from environment.evaluation.replay.trace import AtenStep, Special, TensorRef, Trace

_ALLOCATIONS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
# aten ops that never run in a replay: file I/O, host pinning, reading values back to the host
_DENIED = {"from_file", "_pin_memory", "pin_memory", "_local_scalar_dense", "item", "set_", "to_mkldnn",
           "_copy_from", "_copy_from_and_resize", "save", "_nested_tensor_from_mask", "resize_", "resize_as_"}


class ReplayError(Exception):
    """The trace cannot be replayed (reported as unreplayable: no speed credit)."""


_TORCH_KINDS = {"dtype": torch.dtype, "layout": torch.layout, "memory_format": torch.memory_format}


def _special(value: Special) -> Any:
    if value.kind in _TORCH_KINDS:  # torch.float32, torch.strided, torch.contiguous_format, ...
        found = getattr(torch, value.name, None)
        if not isinstance(found, _TORCH_KINDS[value.kind]):
            raise ReplayError(f"unknown {value.kind} {value.name}")
        return found
    if value.kind == "device":
        if value.name != "cpu":
            raise ReplayError(f"device {value.name} is not this host's")
        return torch.device("cpu")
    import triton.language as tl
    return tl.core.dtype(value.name)


def _op(name: str):
    """The aten operator, if the replay has a cost model for it: a FLOP formula
    (torch.utils.flop_counter), or pointwise/reduction work whose cost is the bytes it moves, or
    pure data movement. Anything else (a fused matmul without a formula, convolution variants,
    linear algebra) could hide compute the roofline never charges, so it is not replayed."""
    _, packet, overload = name.split(".")
    if packet in _DENIED or packet.startswith("_foreach"):
        raise ReplayError(f"{name} is not replayed")
    try:
        op = getattr(getattr(torch.ops.aten, packet), overload)
    except AttributeError:
        raise ReplayError(f"unknown aten operator {name}") from None
    if not has_cost_model(op):
        raise ReplayError(f"{name} has no cost model in the replay (no FLOP formula, not pointwise, not a "
                          "reduction, not data movement): write that part as a Triton kernel or with the ops "
                          "the reference uses")
    return op


# Memory-bound ops without a pointwise or reduction tag: their cost is the bytes they move.
_DATA_MOVEMENT = {
    "copy_", "_to_copy", "cat", "stack", "constant_pad_nd", "repeat", "index_select", "gather", "scatter",
    "scatter_add", "index", "index_put_", "index_copy", "masked_fill", "masked_fill_", "masked_scatter",
    "fill_", "fill", "zero_", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros",
    "new_ones", "new_full", "arange", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "lift_fresh", "lift_fresh_copy", "triu", "tril", "flip", "roll", "embedding", "_unsafe_view", "alias",
    "slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter", "split_with_sizes_copy",
    "_softmax", "_log_softmax", "softmax", "log_softmax", "native_layer_norm", "native_group_norm",
    "_native_batch_norm_legit_no_training", "nll_loss_forward", "unsqueeze_copy", "expand_copy", "t_copy",
    "transpose_copy", "permute_copy", "view_copy", "clamp", "clamp_min", "clamp_max", "logsumexp", "cumsum",
}


def has_cost_model(op) -> bool:
    from torch.utils.flop_counter import flop_registry
    from environment.evaluation.modeled.torch_counting import CPU_FLOPS
    packet = op.overloadpacket
    if packet in flop_registry or packet in CPU_FLOPS or torch.Tag.pointwise in op.tags \
            or torch.Tag.reduction in op.tags:
        return True
    return op.name().split("::", 1)[-1].split(".")[0] in _DATA_MOVEMENT


def _writes_every_element(op) -> bool:
    """An op whose written argument gets a value in every element (a fill, a copy, a pointwise op in
    place): one that initialises state it writes whole. Not a metadata op (squeeze_, set_: nothing
    written) nor a scatter (index_put_ over the whole tensor may write none of it)."""
    return op.overloadpacket.__name__ in ("fill_", "zero_", "copy_") or (
        torch.Tag.pointwise in op.tags and torch.Tag.inplace_view not in op.tags)


def _poison(tensors: list[torch.Tensor]) -> None:
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.view(torch.uint8).fill_(0x5A) if t.is_contiguous() else t.fill_(0x5A)


class Replay:
    def __init__(self, trace: Trace, inputs: list[torch.Tensor], constants: list[torch.Tensor],
                 kernels: ModuleType, kernel_names: list[str], counter: Any, poisoned: frozenset = frozenset()) -> None:
        """A counter with a sample_seed runs a sample of each launch's programs (replay/sampled.py) and
        scales its counts to the grid, as the replay at the task's GPU shape does. poisoned: constant
        storages (ids) filled as fresh allocations are before the first step (state, see above)."""
        self.trace, self.kernels, self.names, self.counter = trace, kernels, set(kernel_names), counter
        self.sample_seed = counter.sample_seed
        self.aten_written: list[coverage.AtenWrite] = []   # what aten steps wrote (sampled replay)
        self.storages: dict[int, torch.UntypedStorage] = {}
        for s in trace.storages:
            if s.source == "input":
                pool = inputs
            elif s.source == "constant":
                pool = constants
            else:
                continue
            if s.index >= len(pool) or pool[s.index].untyped_storage().nbytes() != s.nbytes:
                raise ReplayError(f"storage {s.id} ({s.source} {s.index}) does not match what was sent")
            self.storages[s.id] = pool[s.index].untyped_storage()
        self._created = {s.id: s for s in trace.storages if s.source == "step"}
        self._constants = {s.id for s in trace.storages if s.source == "constant"}
        self.state: set[int] = {r.storage for r in trace.outputs if r.storage in self._constants}
        self.poisoned = poisoned & self._constants
        self.initialised: set[int] = set()  # constants an aten step of the call overwrote whole (charged there)
        self.relied: set[int] = set()       # poisoned state read in sectors no earlier step of the call wrote
        self._written: dict[int, np.ndarray] = {}   # poisoned state: the sectors launches of the call wrote
        for sid in sorted(self.poisoned):
            self._poison_storage(sid)

    def _poison_storage(self, sid: int) -> None:
        """Fill a constant storage as an allocation is filled, in the dtype the trace first views it as."""
        refs = (v for step in self.trace.steps for v in tree_leaves([step.args, list(step.kwargs.values())]))
        dtype = next((getattr(torch, r.dtype, torch.uint8) for r in [*refs, *self.trace.outputs]
                      if isinstance(r, TensorRef) and r.storage == sid), torch.uint8)
        storage = self.storages[sid]
        size = storage.nbytes() // torch.empty(0, dtype=dtype).element_size()
        _poison([torch.empty(0, dtype=dtype).set_(storage, 0, (size,), (1,))] if size else [])

    def _note_aten_writes(self, func, step: AtenStep, args: list, kwargs: dict) -> None:
        for i, arg in enumerate(func._schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            positional = i < len(step.args) and not arg.kwarg_only
            value = step.args[i] if positional else step.kwargs.get(arg.name)
            decoded = args[i] if positional else kwargs.get(arg.name)
            for r, t in zip(*[v if isinstance(v, list) else [v] for v in (value, decoded)]):
                if isinstance(r, TensorRef) and r.storage in self._constants:
                    self.state.add(r.storage)
                    if isinstance(t, torch.Tensor) and _writes_every_element(func) and t.is_contiguous() \
                            and t.numel() * t.element_size() >= self.storages[r.storage].nbytes():
                        self.initialised.add(r.storage)

    def _charge_state_initialisation(self) -> None:
        """State the call relies on but never overwrote whole by an op of its own (a kernel that resets
        it, or recognises the replay's fill, keeps it without paying) is charged one fill of its bytes, as
        zeroing it in forward would be: the poison shows reliance on its contents, this charges its
        preparation whatever the kernel does with the poison."""
        for sid in sorted((self.poisoned & self.relied) - self.initialised):
            torch.empty(self.storages[sid].nbytes(), dtype=torch.uint8).zero_()

    def _sector_span(self, sid: int) -> tuple[int, int]:
        start = self.storages[sid].data_ptr()
        return start // SECTOR, (start + self.storages[sid].nbytes() + SECTOR - 1) // SECTOR

    def _note_reliance(self) -> None:
        """Poisoned state the launch that just ended read (or added into) where no earlier launch of the
        call wrote: the call relies on contents prepared before it. A workspace the call writes before it
        reads it (kernel 1 stores partials, kernel 2 sums them) relies on nothing and is not charged."""
        launch = self.counter.finished
        todo = self.poisoned - self.relied - self.initialised
        if self.sample_seed is not None or launch is None or not todo:
            return
        reads, writes = launch.sectors("read"), launch.sectors("write")
        for sid in todo:
            lo, hi = self._sector_span(sid)
            done = self._written.get(sid, np.zeros(0, dtype=np.int64))
            read = reads[(reads >= lo) & (reads < hi)]
            if read.size and not np.isin(read, done).all():
                self.relied.add(sid)
            wrote = writes[(writes >= lo) & (writes < hi)]
            if wrote.size:
                self._written[sid] = np.unique(np.concatenate([done, wrote]))

    def _note_aten_reads(self, func, step: AtenStep) -> None:
        """Poisoned state an aten step takes (other than to fill it whole) before launches wrote all of it."""
        todo = self.poisoned - self.relied - self.initialised
        if not todo:
            return
        filled = func.overloadpacket.__name__ in ("fill_", "zero_", "copy_")
        refs = [r for r in tree_leaves([step.args[1:] if filled else step.args, list(step.kwargs.values())])
                if isinstance(r, TensorRef) and r.storage in todo]
        for r in refs:
            lo, hi = self._sector_span(r.storage)
            if self._written.get(r.storage, np.zeros(0)).size < hi - lo:
                self.relied.add(r.storage)

    def _note_launch_writes(self) -> None:
        """Constants any store or atomic of the launch that just ended touched (full replays: a sampled
        replay runs the model-shape trace's verdict, not its own)."""
        launch = self.counter.finished
        unwritten = self._constants - self.state
        if self.sample_seed is not None or launch is None or not launch.store_log or not unwritten:
            return
        addrs = np.concatenate([a for a, _ in launch.store_log])
        low, high = int(addrs.min()), int(addrs.max())
        spans = [(sid, self.storages[sid].data_ptr(), self.storages[sid].data_ptr() + self.storages[sid].nbytes())
                 for sid in unwritten]
        spans = [span for span in spans if span[1] <= high and span[2] > low]
        if spans:
            addrs = np.sort(addrs)
            for sid, lo, hi in spans:
                at = int(np.searchsorted(addrs, lo))
                if at < addrs.size and int(addrs[at]) < hi:
                    self.state.add(sid)

    def tensor(self, ref: TensorRef) -> torch.Tensor:
        storage = self.storages.get(ref.storage)
        if storage is None:
            raise ReplayError(f"storage {ref.storage} is used before any step creates it")
        dtype = getattr(torch, ref.dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise ReplayError(f"unknown dtype {ref.dtype}")
        if len(ref.size) != len(ref.stride):
            raise ReplayError("size and stride disagree")
        if any(st < 0 for st in ref.stride):
            raise ReplayError("negative strides are not replayed")
        itemsize = torch.empty(0, dtype=dtype).element_size()
        if 0 not in ref.size:  # torch's set_ would grow the storage rather than refuse: check the extent here
            last = ref.offset + sum((n - 1) * st for n, st in zip(ref.size, ref.stride))
            if (last + 1) * itemsize > storage.nbytes():
                raise ReplayError(f"a tensor view reaches past its storage ({(last + 1) * itemsize} > "
                                  f"{storage.nbytes()} bytes)")
        try:
            return torch.empty(0, dtype=dtype).set_(storage, ref.offset, ref.size, ref.stride)
        except RuntimeError as exc:
            raise ReplayError(f"a tensor does not fit its storage: {exc}") from None

    def decode(self, value: Any) -> Any:
        if isinstance(value, TensorRef):
            return self.tensor(value)
        if isinstance(value, Special):
            return _special(value)
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        return value

    def run(self, keep: bool = True) -> list[torch.Tensor]:
        """Replay every step; with `keep`, return copies of the outputs (the sampled replay checks its
        outputs in place, checked_outputs, and needs no copy of hundreds of MiB)."""
        for index, step in enumerate(self.trace.steps):
            try:
                if isinstance(step, AtenStep):
                    self._aten(index, step)
                else:
                    self._launch(step)
            except ReplayError:
                raise
            except Exception as exc:  # the step itself failed: the trace does not replay
                what = step.op if isinstance(step, AtenStep) else f"launch of {step.kernel}"
                raise ReplayError(f"step {index} ({what}) failed: {type(exc).__name__}: {str(exc)[:300]}") from None
        self._charge_state_initialisation()
        if not keep:
            return []
        with self.counter.paused():
            return [self.tensor(r).clone() for r in self.trace.outputs]

    def _aten(self, index: int, step: AtenStep) -> None:
        func = _op(step.op)
        with self.counter.paused():
            args = self.decode(step.args)
            kwargs = {k: self.decode(v) for k, v in step.kwargs.items()}
        self._note_aten_reads(func, step)
        self._note_aten_writes(func, step, args, kwargs)
        out = func(*args, **kwargs)
        leaves = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        for leaf_index, sid in step.creates:
            expected = self._created.get(sid)
            if expected is None or expected.index != index or leaf_index >= len(leaves):
                raise ReplayError(f"step {index} does not create storage {sid}")
            self.storages[sid] = leaves[leaf_index].untyped_storage()
        if step.op.split(".")[1] in _ALLOCATIONS:
            with self.counter.paused():
                _poison(leaves)
        elif self.sample_seed is not None:
            self.aten_written.extend(coverage.AtenWrite(t) for t in leaves)

    def _launch(self, step) -> None:
        if step.kernel not in self.names:
            raise ReplayError(f"kernel {step.kernel} is not a rebuilt kernel")
        kernel = getattr(self.kernels, step.kernel)
        with self.counter.paused():
            args = self.decode(step.args)
            kwargs = {k: self.decode(v) for k, v in step.kwargs.items()}
        before = len(self.counter.sampled_launches)
        self.counter.finished = None
        kernel[tuple(step.grid)](*args, **kwargs)  # a sampled counter runs a sample of its programs
        self._note_launch_writes()
        self._note_reliance()
        # what an aten op wrote where unsampled programs of this launch may store is no result (an output
        # zeroed before a kernel stores into it), and no coverage: the launch's own stores must cover it
        handed = [v if isinstance(v, torch.Tensor) else getattr(v, "base", None) for v in [*args, *kwargs.values()]]
        handed = [v for v in handed if isinstance(v, torch.Tensor)]
        for launch in self.counter.sampled_launches[before:]:
            for write in self.aten_written:
                if launch.overwrites(write.tensor):
                    at = write.tensor.untyped_storage().data_ptr()
                    write.cleared += [v for v in handed if v.untyped_storage().data_ptr() == at] or [write.tensor]

    def checked_outputs(self) -> list[torch.Tensor]:
        """Per output, the indices of the elements the sampled replay's executed work wrote and their
        values: [indices_0, values_0, indices_1, values_1, ...] (what the evaluator compares with the
        reference at those positions)."""
        out = []
        with self.counter.paused():
            for ref in self.trace.outputs:
                t = self.tensor(ref)
                idx = coverage.written_elements(t, self.counter.stores, self.aten_written, self.sample_seed,
                                                 self.counter.store_order, self.counter.producers)
                self.counter.output_coverage.append(
                    coverage.output_coverage(t, self.counter.sampled_launches, self.aten_written))
                self.counter.output_meta += [list(g) for g in geometry([t])]
                index = torch.from_numpy(idx)
                out += [index, t.flatten()[index].clone()]
        return out
