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
ATTENTION: dict = _BLOCK["attention"]
_ATTENTION_DTYPES = {getattr(torch, name) for name in ATTENTION["dtypes"]}


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


def attention_grid(func, args, kwargs) -> dict | None:
    """A half-precision SDPA as FlashAttention-2's forward kernel runs it (gpus.yaml `attention`): its
    programs (one per query block, head and batch), the FLOPs of the key blocks it computes (under
    is_causal only those at or below the diagonal) and its online softmax's elementwise ops on their
    scores, and its busiest program's FLOPs, ops and bytes, to be priced as a Triton launch of that
    grid is. None for any other op or dtype."""
    if func._overloadpacket.__name__ not in ATTENTION["ops"] or len(args) < 3:
        return None
    q, k, v = args[:3]
    if not all(isinstance(t, torch.Tensor) and t.dim() == 4 for t in (q, k, v)) or q.dtype not in _ATTENTION_DTYPES:
        return None
    causal = bool(args[4] if len(args) > 4 else kwargs.get("is_causal", False))
    batch, heads, s_q, d = q.shape
    s_k, d_v = k.shape[-2], v.shape[-1]
    block_m = ATTENTION["block_m"]
    fits = [limit for limit in sorted(ATTENTION["block_n"]) if d <= limit]
    block_n = ATTENTION["block_n"][fits[0] if fits else max(ATTENTION["block_n"])]
    n_blocks = -(-s_k // block_n)
    scores, busiest = 0, 0      # score elements computed: all, and by the busiest CTA
    for m in range(-(-s_q // block_m)):
        rows = min(block_m, s_q - m * block_m)
        last_key = min(s_k, (m + 1) * block_m) if causal else s_k   # is_causal: top-left aligned, as SDPA defines it
        keys = min(s_k, min(n_blocks, -(-last_key // block_n)) * block_n)
        scores += rows * keys
        busiest = max(busiest, rows * keys)
    size = q.element_size()
    ops = ATTENTION["softmax_ops"] + d_v / block_n   # and the rescale of the output rows once per key block
    program_bytes = size * (block_m * (d + d_v) + busiest // block_m * (d + d_v))   # q and out rows, the k/v streamed
    dot = 2 * (d + d_v)         # q k^T and p v: 2 FLOPs per multiply-add, per score element
    return {"programs": batch * heads * -(-s_q // block_m),
            "flops": float(batch * heads * scores * dot), "elementwise": float(batch * heads * scores * ops),
            "program_flops": float(busiest * dot), "program_elementwise": float(busiest * ops),
            "program_bytes": int(program_bytes)}
