"""The reward as an OpenEnv rubric tree: the scalar reward, the breakdown and the exported record
all come from one object.

    root = Rounded(Sequential(
        Gate(NotHacked),                       # any detected hack: 0
        Gate(NoVeto),                          # any independent signal's veto: 0
        WeightedSum([Compiled, Trials, Correct, Speed], [0.10, 0.30, 0.10, 0.50])))
    Trials = Sequential(Gate(Compiled), TrialsFraction)
    Speed  = Sequential(Gate(Correct), SpeedFraction)

Leaves read the evaluation record: ``observation.evaluation`` (a KernelObservation) or an EvalResult
passed directly (``reward.score``). ``breakdown(root)`` reads each weighted part's ``last_score``
times its weight, so the parts the page draws are the ones the root summed.

A rubric caches ``last_score`` per node: use one tree per environment (per session), never one
shared across threads.
"""
from __future__ import annotations

import math
from typing import Any

from openenv.core.rubrics import Gate, Rubric, Sequential, WeightedSum

from environment.config import SPEEDUP_CAP, SPEEDUP_FLOOR
from environment.evaluation import flags as F
from environment.evaluation.result import EvalResult

W_COMPILED, W_TRIALS, W_CORRECT, W_SPEED = 0.10, 0.30, 0.10, 0.50
PARTS = ("compiled", "trials", "correct", "speed")
DIGITS = 6


def speed_fraction(speedup: float) -> float:
    """clip((log2(speedup) + 2) / 4, 0, 1): 0.25x earns 0, 1x earns 0.25, 4x (the cap) earns 1."""
    lo, hi = math.log2(SPEEDUP_FLOOR), math.log2(SPEEDUP_CAP)
    return min(1.0, max(0.0, (math.log2(max(speedup, 1e-9)) - lo) / (hi - lo)))


def evaluation_of(observation: Any) -> EvalResult | None:
    if isinstance(observation, EvalResult):
        return observation
    return getattr(observation, "evaluation", None)


class _Leaf(Rubric):
    """A leaf that scores the evaluation record; no record (a reset, a harness error) scores 0."""

    def forward(self, action: Any, observation: Any) -> float:
        result = evaluation_of(observation)
        return 0.0 if result is None else float(self.score(result))

    def score(self, result: EvalResult) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class NotHacked(_Leaf):
    def score(self, result: EvalResult) -> float:
        return 0.0 if result.hacked else 1.0


class NoVeto(_Leaf):
    """1 unless an independent signal (environment.signals) vetoes the step."""

    def score(self, result: EvalResult) -> float:
        return 0.0 if any(s.verdict == "veto" for s in result.signals) else 1.0


class Compiled(_Leaf):
    def score(self, result: EvalResult) -> float:
        return 1.0 if result.compiled else 0.0


class Correct(_Leaf):
    def score(self, result: EvalResult) -> float:
        return 1.0 if result.correct else 0.0


class TrialsFraction(_Leaf):
    def score(self, result: EvalResult) -> float:
        c = result.correctness
        return c.trials_passed / c.trials_total if c is not None and c.trials_total else 0.0


class SpeedFraction(_Leaf):
    """Speed credit needs a known, plausible speedup (modeled on CPU hosts, measured on CUDA hosts)."""

    def score(self, result: EvalResult) -> float:
        p = result.performance
        if p is None or p.speedup is None or F.IMPLAUSIBLE_SPEEDUP in result.flags:
            return 0.0
        return speed_fraction(p.speedup)


class Rounded(Rubric):
    """The child's score rounded to 6 digits and clipped to [0, 1] (what the wire carries)."""

    def __init__(self, rubric: Rubric):
        super().__init__()
        self.rubric = rubric

    def forward(self, action: Any, observation: Any) -> float:
        return min(1.0, max(0.0, round(self.rubric(action, observation), DIGITS)))


class KernelRubric(Rounded):
    """The root: gates, then the weighted parts. ``breakdown()`` after a call gives the parts."""

    def __init__(self) -> None:
        weighted = WeightedSum(
            [Compiled(), Sequential(Gate(Compiled()), TrialsFraction()), Correct(),
             Sequential(Gate(Correct()), SpeedFraction())],
            [W_COMPILED, W_TRIALS, W_CORRECT, W_SPEED])
        super().__init__(Sequential(Gate(NotHacked()), Gate(NoVeto()), weighted))
        object.__setattr__(self, "weighted", weighted)  # a shortcut, not a second registration

    def breakdown(self) -> dict[str, float]:
        """Each weighted part's contribution to the last call (all 0 when a gate closed)."""
        if self.last_score is None:
            return {}
        if not self.last_score:
            return dict.fromkeys(PARTS, 0.0)
        return {name: round(weight * (child.last_score or 0.0), DIGITS)
                for name, child, weight in zip(PARTS, self.weighted.children(), self.weighted.weights)}

    def gates_closed(self) -> list[str]:
        """The names of the gates that zeroed the last call."""
        seq = self.rubric
        return [name for name, gate in (("not_hacked", seq[0]), ("no_veto", seq[1])) if gate.last_score == 0.0]


def score(result: EvalResult) -> tuple[float, dict[str, float]]:
    """(root score, breakdown) of one evaluation record, with a fresh tree (thread-safe)."""
    root = KernelRubric()
    value = root(None, result)
    return value, root.breakdown()
