"""The reward's weights and speed scale, apart from the rubric tree (environment/rubric.py) that sums them.

The evaluation children read SPEEDUP_FLOOR from environment.config (evaluator/modeled_speed: a price at or below it is not worth a GPU-shape
replay). Importing it through the rubric imported OpenEnv's server and Gradio behind it, 10-20 s of every
evaluation on a loaded 2-core host, in a forked child that paid it anew each time: keep this module light.
"""
from __future__ import annotations

import math

from environment.config import SPEEDUP_CAP, SPEEDUP_FLOOR  # defined once; the harness reads config

W_COMPILED, W_TRIALS, W_CORRECT, W_SPEED = 0.10, 0.30, 0.10, 0.50


def speed_fraction(speedup: float) -> float:
    """clip((log2(speedup) + 2) / 4, 0, 1): 0.25x earns 0, 1x earns 0.25, 4x (the cap) earns 1."""
    lo, hi = math.log2(SPEEDUP_FLOOR), math.log2(SPEEDUP_CAP)
    return min(1.0, max(0.0, (math.log2(max(speedup, 1e-9)) - lo) / (hi - lo)))
