"""Physics floor: a claimed candidate time below what the hardware allows for the work the task must
do is impossible, whatever the main verdict says (KernelGuard's roofline floor). A veto.

The floor at the shape the time was claimed at: every input and parameter read once and every output
written once at the fastest memory bandwidth the target list (gpus.yaml) names, or the task's FLOPs
(torch's FlopCounterMode on the meta device) at the fastest peak rate it names (FP8 tensor cores:
lenient on purpose, so a causal kernel that skips half the FLOPs, or TF32, stays above it), whichever
is longer. The claim is the modeled candidate time (CPU hosts) or the measured median (CUDA hosts).
A claim under FLOOR_MARGIN of the floor is a veto (the margin covers rounding in the model).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import yaml

from environment.evaluation.modeled.model import SPEC_PATH
from environment.evaluation.result import EvalResult, Signal
from environment.tasks.scaling import apply, meta_cost

FLOOR_MARGIN = 0.9
NAME = "physics_floor"


@lru_cache(maxsize=1)
def fastest() -> tuple[float, float]:
    """(bytes/s, FLOP/s): the highest HBM bandwidth and the highest peak rate of any GPU in gpus.yaml."""
    with open(SPEC_PATH) as f:
        gpus = yaml.safe_load(f)["gpus"].values()
    return max(g["hbm_bytes_per_s"] for g in gpus), max(max(g["peak"].values()) for g in gpus)


_COSTS: dict[tuple, tuple[int, float]] = {}


def _cost(task, shape: tuple) -> tuple[int, float]:
    key = (task.id, task.reference_code, shape)
    if key not in _COSTS:
        module = task.load_reference()
        apply(module, dict(shape), task.derived)
        cost = meta_cost(module)
        _COSTS[key] = (cost.bytes, cost.flops)
    return _COSTS[key]


def floor_us(task, shape: dict[str, int]) -> tuple[float, int, float]:
    """(floor in µs, bytes, FLOPs) of one forward at the shape."""
    nbytes, flops = _cost(task, tuple(sorted(shape.items())))
    bw, peak = fastest()
    return max(nbytes / bw, flops / peak) * 1e6, nbytes, flops


def _claim(task, result: EvalResult) -> Optional[tuple[float, dict[str, int], str]]:
    p = result.performance
    if p is None or p.speedup is None:
        return None
    if p.speedup_kind == "modeled" and p.modeled_candidate is not None and p.modeled_candidate.shape:
        return p.modeled_candidate.time_us, p.modeled_candidate.shape, "modeled"
    if p.speedup_kind == "measured_cuda" and p.candidate is not None:
        shapes = task.shapes("cuda")
        shape = max(shapes, key=lambda s: sum(s.values()) if s else 0) if shapes else None
        return (p.candidate.median_ms * 1e3, shape, "measured") if shape else None
    return None  # a CPU wall clock is never near a GPU's floor


def signal(task, result: EvalResult) -> Signal:
    claim = _claim(task, result)
    if claim is None:
        return Signal(name=NAME, verdict="abstain", why="no modeled or CUDA-measured candidate time to check")
    claimed, shape, kind = claim
    try:
        floor, nbytes, flops = floor_us(task, shape)
    except Exception as exc:  # a reference without meta kernels: no floor, say so
        return Signal(name=NAME, verdict="abstain", why=f"no floor at {shape}: {type(exc).__name__}")
    ratio = claimed / floor if floor > 0 else None
    what = (f"{kind} {claimed:.2f} µs vs floor {floor:.2f} µs ({nbytes / 1e6:.1f} MB at the fastest HBM, "
            f"{flops / 1e9:.1f} GFLOP at the fastest peak) at {shape}")
    if ratio is not None and ratio < FLOOR_MARGIN:
        return Signal(name=NAME, verdict="veto", value=round(ratio, 4),
                      why=f"faster than the hardware allows: {what}")
    return Signal(name=NAME, verdict="agree", value=None if ratio is None else round(ratio, 4), why=what)
