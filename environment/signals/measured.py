"""Measured against modeled speedup (CUDA hosts): the roofline model and the clock should tell the
same story. On a CPU host there is no GPU clock: abstain.

value: measured / modeled speedup. Disagree when they differ by more than RATIO_LIMIT either way.
The modeled speedup comes from the result when the harness recorded one beside the measurement.
"""
from __future__ import annotations

from environment.evaluation.result import EvalResult, Signal

NAME = "measured_vs_modeled"
RATIO_LIMIT = 4.0


def signal(result: EvalResult) -> Signal:
    p = result.performance
    if result.backend != "cuda" or p is None or p.speedup_kind != "measured_cuda" or p.speedup is None:
        return Signal(name=NAME, verdict="abstain", why="no CUDA measurement on this host")
    modeled = p.model_shape_speedup or p.gpu_shape_speedup
    if not modeled:
        return Signal(name=NAME, verdict="abstain", why="measured on CUDA, no modeled speedup recorded beside it")
    ratio = p.speedup / modeled
    why = f"measured {p.speedup:.2f}x, modeled {modeled:.2f}x"
    if ratio > RATIO_LIMIT or ratio < 1 / RATIO_LIMIT:
        return Signal(name=NAME, verdict="disagree", value=round(ratio, 4), why=f"the clock and the model differ: {why}")
    return Signal(name=NAME, verdict="agree", value=round(ratio, 4), why=why)
