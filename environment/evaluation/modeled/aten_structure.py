"""The kernels an aten op launches on CUDA, from gpus.yaml's `aten_structure` (sources there).

The dispatcher shows `logsumexp` or `_softmax` as one op, but ATen runs it on a GPU as several
kernels, or as one kernel that loops over its rows more than once. `kernel_bytes` turns one op into
the byte count of each kernel it launches, so the reference (and PyTorch code in a candidate) is
priced as the GPU runs it. Ops not listed are one kernel moving their inputs and outputs once.
"""
from __future__ import annotations

from pathlib import Path

import torch
import yaml

from environment.evaluation.modeled.memory import SECTOR, tensor_span

SPEC_PATH = Path(__file__).with_name("gpus.yaml")
with open(SPEC_PATH) as _f:   # read at import: counting runs in children that may not open files
    _BLOCK: dict = yaml.safe_load(_f)["aten_structure"]
VECTOR_BYTES: int = _BLOCK["vector_bytes"]
STRUCTURE: dict = _BLOCK["ops"]


def _bytes(t: torch.Tensor) -> int:
    return tensor_span(t)[2] if t.numel() else 0


def _row(t: torch.Tensor) -> tuple[int, int]:
    """(elements in the last dimension, rows) of `t`."""
    n = t.shape[-1] if t.dim() else 1
    return n, (t.numel() // n if n else 0)


def _holds(when: dict, func, args, first: torch.Tensor) -> bool:
    n, _ = _row(first)
    row_bytes = n * first.element_size()
    for key, value in (when or {}).items():
        if key == "last_dim":
            dim = args[1] if len(args) > 1 and isinstance(args[1], int) else -1
            if (dim % max(first.dim(), 1) == max(first.dim(), 1) - 1) != value:
                return False
        elif key == "row_max" and n > value:
            return False
        elif key == "row_bytes_max" and row_bytes > value:
            return False
        elif key == "row_bytes_below" and row_bytes >= value:
            return False
        elif key == "vector" and (row_bytes % VECTOR_BYTES == 0) != value:
            return False
        elif key not in ("last_dim", "row_max", "row_bytes_max", "row_bytes_below", "vector"):
            raise ValueError(f"gpus.yaml aten_structure: unknown condition {key!r} for {func}")
    return True


def kernel_bytes(func, args, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> list[int] | None:
    """Bytes moved by each kernel `func` launches on CUDA, or None when it is not listed (one
    kernel moving its inputs and outputs once)."""
    variants = STRUCTURE.get(func._overloadpacket.__name__)
    if not variants or not inputs or not outputs:
        return None
    first = inputs[0]
    chosen = next((v for v in variants if _holds(v.get("when"), func, args, first)), None)
    if chosen is None:
        return None
    _, rows = _row(first)
    size_in = _bytes(first)
    terms = {
        "in": size_in,
        "args": sum(_bytes(t) for t in inputs[1:]),
        "out": _bytes(outputs[0]),
        "extra": sum(_bytes(t) for t in outputs[1:]),
        "tmp": size_in,
        "rows": min(size_in, rows * SECTOR),
        "picks": min(size_in, outputs[0].numel() * SECTOR),
    }
    out = []
    for kernel in chosen["kernels"]:
        reads, _, writes = kernel.partition("->")
        out.append(sum(terms[name] for name in reads.split() + writes.split()))
    return out
