"""Which GPU shape a task is priced at, and the labels its inputs and sample are drawn from (the plan's
pure part; the GPU-shape stage itself is gpu_shape.py)."""
from __future__ import annotations

import hashlib
from typing import Any, Optional

from environment.evaluation.evaluator.inputs import _planned_bytes

# Inputs of the GPU shape are made and held by the reference child and the sampler (one copy each);
# larger shapes stay at the model shape (the children's address space is KERNEL_ENV_MEMORY_MB).
INPUT_CAP_BYTES = 256 << 20


def _label(seed: int, label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{label}|{seed}".encode()).digest()[:8], "little") >> 1


def choose_shape(task: Any, reference: Any, cap_bytes: int) -> tuple[Optional[dict[str, int]], str]:
    """(shape, "") or (None, why the modeled time stays at the model shape)."""
    if not task.gpu_shapes:
        return None, "the task names no GPU shape"
    sized = []
    for i, shape in enumerate(task.gpu_shapes):
        for name, value in shape.items():
            setattr(reference, name, value)
        planned = _planned_bytes(reference)
        if planned is not None and planned <= cap_bytes:
            sized.append((planned, i, shape))
    if not sized:
        return None, f"no GPU shape's inputs fit in {cap_bytes >> 20} MiB"
    return min(sized)[2], ""


def model_shape_of(task: Any) -> dict[str, int]:
    """The shape the model-shape replay counts at."""
    return task.model_shape or max(task.cpu_shapes, key=lambda s: sum(s.values()) if s else 0)
