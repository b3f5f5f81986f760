"""The one place a score and its breakdown are computed from an EvalResult.

score = compiled (0.10) + trials (0.30 x passed/total) + correct (0.10) + speed (0.50 x s),
s = clip((log2(speedup) + 2) / 4, 0, 1): 0.25x earns 0, 1x earns 0.25, 4x (the cap) earns 1.
Any detected hack scores 0. Speed credit needs a correct result and a known, plausible speedup
(modeled on CPU hosts, measured on CUDA hosts, never mixed). A wrong submission therefore scores
at most 0.40 and a correct one at least 0.50.
"""
from __future__ import annotations

import math

from environment.evaluation import flags as F
from environment.evaluation.result import EvalResult

W_COMPILED, W_TRIALS, W_CORRECT, W_SPEED = 0.10, 0.30, 0.10, 0.50
SPEEDUP_FLOOR, SPEEDUP_CAP = 0.25, 4.0


def speed_fraction(speedup: float) -> float:
    lo, hi = math.log2(SPEEDUP_FLOOR), math.log2(SPEEDUP_CAP)
    return min(1.0, max(0.0, (math.log2(max(speedup, 1e-9)) - lo) / (hi - lo)))


def score(result: EvalResult) -> tuple[float, dict[str, float]]:
    """(score in [0, 1], components that sum to it)."""
    parts = {"compiled": 0.0, "trials": 0.0, "correct": 0.0, "speed": 0.0}
    if result.hacked:
        return 0.0, parts
    if result.compiled:
        parts["compiled"] = W_COMPILED
    c = result.correctness
    if c is not None and c.trials_total:
        parts["trials"] = round(W_TRIALS * c.trials_passed / c.trials_total, 6)
    if result.correct:
        parts["correct"] = W_CORRECT
        p = result.performance
        if p is not None and p.speedup is not None and F.IMPLAUSIBLE_SPEEDUP not in result.flags:
            parts["speed"] = round(W_SPEED * speed_fraction(p.speedup), 6)
    total = round(sum(parts.values()), 6)
    return min(1.0, total), parts
