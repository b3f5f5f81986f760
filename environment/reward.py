"""The score and its breakdown of an EvalResult: the rubric tree in environment/rubric.py.

score = compiled (0.10) + trials (0.30 x passed/total) + correct (0.10) + speed (0.50 x s),
s = clip((log2(speedup) + 2) / 4, 0, 1): 0.25x earns 0, 1x earns 0.25, 4x (the cap) earns 1.
Any detected hack, and any veto of an independent signal (environment/signals), scores 0. Speed
credit needs a correct result and a known, plausible speedup (modeled on CPU hosts, measured on
CUDA hosts, never mixed). A wrong submission therefore scores at most 0.40 and a correct one at
least 0.50.
"""
from __future__ import annotations

from environment.rubric import (SPEEDUP_CAP, SPEEDUP_FLOOR, W_COMPILED, W_CORRECT, W_SPEED, W_TRIALS,  # noqa: F401
                                score, speed_fraction)
