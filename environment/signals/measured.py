"""Measured against modeled speedup (CUDA hosts): the clock and the roofline model should tell the same
story. On a CPU host there is no GPU clock: abstain.

A CUDA record carries the measured speedup and both measured times at the timing shape (the largest
CUDA shape, performance.measure), and no modeled candidate (the model's count of the candidate runs on
CPU hosts only). From the task alone the model gives the other side: the reference's aten ops priced on
the model's GPU (modeled/reference.py, on the meta device at the timing shape) over the task's roofline
floor on that GPU (inputs, parameters and outputs moved once, or its FLOPs at peak) is the largest
speedup the model can credit any kernel: its ceiling. value: measured speedup / modeled ceiling;
disagree above RATIO_LIMIT (a speedup no kernel the model knows reaches: a disturbed reference clock,
work moved off the clock). A record that does carry a modeled speedup (model_shape_speedup,
gpu_shape_speedup) is compared with it both ways instead.
"""
from __future__ import annotations

from typing import Optional

import torch

from environment.evaluation.modeled.model import load_spec
from environment.evaluation.modeled.reference import reference_cost
from environment.evaluation.result import EvalResult, Signal
from environment.signals.physics import floor_us
from environment.tasks.scaling import apply

NAME = "measured_vs_modeled"
RATIO_LIMIT = 4.0
_CEILINGS: dict[tuple, tuple[float, float, float]] = {}


def timing_shape(task) -> Optional[dict[str, int]]:
    """The shape the CUDA timing runs at (performance.measure: the largest CUDA shape)."""
    shapes = task.shapes("cuda")
    return max(shapes, key=lambda s: sum(s.values()) if s else 0) if shapes else None


def ceiling(task, shape: dict[str, int]) -> tuple[float, float, float]:
    """(modeled reference µs, roofline floor µs, their ratio) on the model's GPU at the shape."""
    key = (task.id, task.reference_code, tuple(sorted(shape.items())))
    if key not in _CEILINGS:
        spec = load_spec()
        module = task.load_reference()
        apply(module, dict(shape), task.derived)
        with torch.device("meta"):
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
        ref_us = reference_cost(model, inputs, spec, {"atol": task.atol, "rtol": task.rtol}).time_us
        _, nbytes, flops = floor_us(task, shape)
        floor = max(nbytes / spec["hbm_bytes_per_s"], flops / max(spec["peak"].values())) * 1e6
        _CEILINGS[key] = (ref_us, floor, ref_us / floor if floor > 0 else float("inf"))
    return _CEILINGS[key]


def _compare(measured: float, modeled: float, what: str) -> Signal:
    ratio = measured / modeled
    why = f"measured {measured:.2f}x, {what} {modeled:.2f}x"
    if ratio > RATIO_LIMIT or ratio < 1 / RATIO_LIMIT:
        return Signal(name=NAME, verdict="disagree", value=round(ratio, 4),
                      why=f"the clock and the model differ more than {RATIO_LIMIT:g}x: {why}")
    return Signal(name=NAME, verdict="agree", value=round(ratio, 4), why=why)


def signal(task, result: EvalResult) -> Signal:
    p = result.performance
    if result.backend != "cuda" or p is None or p.speedup_kind != "measured_cuda" or not p.speedup:
        return Signal(name=NAME, verdict="abstain", why="no CUDA measurement on this host")
    modeled = p.model_shape_speedup or p.gpu_shape_speedup
    if modeled:
        return _compare(p.speedup, modeled, "modeled")
    shape = timing_shape(task)
    try:
        ref_us, floor, most = ceiling(task, shape)
    except Exception as exc:  # a reference without meta kernels or a model price: say so
        return Signal(name=NAME, verdict="abstain", why=f"no modeled ceiling at {shape}: {type(exc).__name__}")
    ratio = p.speedup / most
    why = (f"measured {p.speedup:.2f}x; the model's ceiling at {shape} is {most:.2f}x (reference modeled "
           f"{ref_us:.1f} µs over a roofline floor of {floor:.1f} µs)")
    if p.reference is not None:
        why += f"; reference measured {p.reference.median_ms * 1e3:.1f} µs"
    if ratio > RATIO_LIMIT:
        return Signal(name=NAME, verdict="disagree", value=round(ratio, 4),
                      why=f"a speedup {ratio:.1f}x past what the model credits any kernel: {why}")
    return Signal(name=NAME, verdict="agree", value=round(ratio, 4), why=why)
