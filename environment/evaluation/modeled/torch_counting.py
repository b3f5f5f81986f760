"""Count PyTorch work as GPU launches: a TorchDispatchMode sees every aten op.

Each non-view aten op is one launch moving the unique sectors of its input and output tensors
(what a GPU kernel for it would read from and write to memory), unless ATen runs it on CUDA as
several kernels or passes (aten_structure.py, gpus.yaml `aten_structure`): then one launch each. FLOPs come from
`torch.utils.flop_counter`'s registry; CPU-only op names map to the formula of the op a GPU runs.
The same counting applies to the reference and to PyTorch code inside a candidate.
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

from environment.evaluation.modeled.aten_structure import attention_grid, kernel_bytes
from environment.evaluation.modeled.memory import SECTOR, no_sectors, size, tensor_interval, union
from environment.evaluation.modeled.precision import torch_dot_precision

aten = torch.ops.aten

# CPU kernels of ops whose GPU counterpart has a formula in the registry.
CPU_FLOPS = {
    aten._scaled_dot_product_flash_attention_for_cpu: flop_registry[aten._scaled_dot_product_flash_attention],
}

# Allocations: no kernel runs, and the memory holds nothing a counted launch produced.
_ALLOCATIONS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
# Data lifted from the host (torch.tensor, torch.from_numpy): a host-to-device copy, not work.
_HOST_LIFTS = {"lift_fresh", "lift_fresh_copy", "lift"}
# Metadata or host-side queries that launch nothing.
# `_unsafe_view` is a view the schema does not mark as one (no kernel: it aliases the storage).
_NO_LAUNCH = {"_unsafe_view", "set_", "resize_", "_local_scalar_dense", "sym_size", "sym_stride", "sym_numel",
              "sym_storage_offset", "record_stream", "is_same_size", "_has_compatible_shallow_copy_type"}


# In-place ops that overwrite their destination whole without reading it (a memset, a copy, a random fill): on a GPU
# the kernel only writes it. Counted as a read, `torch.empty(n).zero_()` read n garbage bytes (a tainted launch, no
# speed credit, where torch.zeros(n) is priced) and paid for reading what it only writes.
_OVERWRITE_SELF = {"zero_", "fill_", "copy_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_",
                   "geometric_", "cauchy_", "log_normal_"}


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _read(func, args, kwargs) -> list[torch.Tensor]:
    """The tensors an aten op reads: its inputs but a destination it only writes (_OVERWRITE_SELF's `self`, an
    `out=` argument) where that destination is one contiguous run of memory. A strided view's writes are counted
    as its whole span (memory.tensor_interval), so two elements zeroed at a buffer's ends would otherwise mark
    the garbage between them clean: such a destination stays read, as before."""
    written, read = set(), []
    overwrites = func.name().split("::", 1)[-1].split(".", 1)[0] in _OVERWRITE_SELF
    for k, a in enumerate(func._schema.arguments):
        value = args[k] if k < len(args) and not a.kwarg_only else kwargs.get(a.name)
        tensors = _tensors(value)
        # out= (and its named variants), or the self an op overwrites whole: written, not read
        if a.alias_info is not None and a.alias_info.is_write and (a.kwarg_only or (k == 0 and overwrites)):
            written.update(id(t) for t in tensors if t.is_contiguous())
        else:
            read += tensors
    # a destination also passed as an operand (torch.add(z, y, out=z)) is read there
    operands = {id(t) for t in read}
    return read + [t for t in _tensors((args, kwargs)) if id(t) not in written and id(t) not in operands]


def _sectors(tensors: list[torch.Tensor]):
    found = no_sectors()
    for t in tensors:
        if t.numel():
            found = union(found, tensor_interval(t))
    return found


def aten_records(func, args, kwargs, out):
    """(records, read sectors, written sectors) of one aten op: one record per kernel it launches on
    CUDA (the op's FLOPs on the first); the sectors, as intervals, are the op's own (the ledger's)."""
    inputs, outputs = _tensors((args, kwargs)), _tensors(out)
    reads, writes = _sectors(_read(func, args, kwargs)), _sectors(outputs)
    flops = {}
    formula = CPU_FLOPS.get(func._overloadpacket) or flop_registry.get(func._overloadpacket)
    if formula is not None and inputs:
        flops[torch_dot_precision(inputs[0].dtype)] = float(formula(*args, **kwargs, out_val=out))
    kernels = kernel_bytes(func, args, inputs, outputs) or [(size(reads) + size(writes)) * SECTOR]
    records = []
    for i, moved in enumerate(kernels):
        name = str(func) if len(kernels) == 1 else f"{func} [{i + 1}/{len(kernels)}]"
        records.append({"name": name, "kind": "aten", "programs": None, "bytes_unique": moved,
                        "bytes_sectors": moved, "flops": flops if i == 0 else {}})
    grid = attention_grid(func, args, kwargs)
    if grid is not None:   # FlashAttention-2's grid: priced per wave of CTAs, as a Triton launch
        key = torch_dot_precision(inputs[0].dtype)
        records[0].update(programs=grid["programs"], flops={key: grid["flops"], "fp32": grid["elementwise"]},
                          program_flops_max={key: grid["program_flops"], "fp32": grid["program_elementwise"]},
                          program_bytes_max=grid["program_bytes"])
    return records, reads, writes


class AtenCounter(TorchDispatchMode):
    """Forwards every aten op to its owning counter after running it."""

    def __init__(self, owner) -> None:
        super().__init__()
        self.owner = owner

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.owner.on_aten(func, args, kwargs, out)
        return out


def classify(func) -> str:
    """"launch", "allocation", "host" or "skip" (views and metadata)."""
    base = func.name().split("::", 1)[-1].split(".", 1)[0]
    if base in _HOST_LIFTS:
        return "host"
    if base in _ALLOCATIONS:
        return "allocation"
    if func.is_view or base in _NO_LAUNCH:
        return "skip"
    return "launch"
