"""Grader entry points named in openenv.yaml: source code in, score in [0, 1] out. Never raise."""
from __future__ import annotations

import logging

from environment import reward, signals
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

log = logging.getLogger(__name__)


def grade(task_id: str, code: str, seed: int = 0) -> float:
    """Score one submission for task_id, deterministically for a given (code, seed)."""
    try:
        task, code = get_task(task_id), code if isinstance(code, str) else ""
        # the same rubric as a step: a veto of an independent signal zeroes the grade too
        value, _ = reward.score(signals.attach(task, code, evaluate(task, code, seed=seed, salt="grader",
                                                                    session="grader")))
        return float(min(1.0, max(0.0, value)))
    except Exception:  # a grader never raises: an unusable submission scores 0
        log.exception("grader for %s failed", task_id)
        return 0.0


def grade_gelu_bias(code: str, seed: int = 0) -> float:
    return grade("gelu_bias", code, seed)


def grade_rmsnorm(code: str, seed: int = 0) -> float:
    return grade("rmsnorm", code, seed)


def grade_causal_attention(code: str, seed: int = 0) -> float:
    return grade("causal_attention", code, seed)
