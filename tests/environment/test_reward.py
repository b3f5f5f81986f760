"""The reward: one formula, components that sum to the score, hacks at 0, correct above wrong."""
import math

from hypothesis import given, strategies as st

from environment import reward
from environment.evaluation import flags as F
from environment.evaluation.result import (CorrectnessResult, EvalResult, LoadResult, PerformanceResult,
                                           StaticResult)


def _result(passed: int, total: int = 5, correct: bool = False, speedup=None, flags=(), compiled=True):
    return EvalResult(
        task_id="t", backend="cpu", static=StaticResult(ok=True), load=LoadResult(ok=compiled),
        correctness=CorrectnessResult(correct=correct, trials_passed=passed, trials_total=total) if compiled else None,
        performance=PerformanceResult(speedup=speedup, speedup_kind="modeled") if speedup else None,
        flags=list(flags))


@given(st.integers(0, 5), st.booleans(), st.one_of(st.none(), st.floats(0.01, 100.0)), st.booleans())
def test_breakdown_sums_to_a_score_in_the_unit_interval(passed, correct, speedup, compiled):
    correct = correct and passed == 5
    value, parts = reward.score(_result(passed, correct=correct, speedup=speedup, compiled=compiled))
    assert 0.0 <= value <= 1.0
    assert math.isclose(sum(parts.values()), value, abs_tol=1e-6)


def test_a_detected_hack_scores_zero_whatever_else_happened():
    value, parts = reward.score(_result(5, correct=True, speedup=4.0, flags=[F.DECOY_KERNEL]))
    assert value == 0.0 and sum(parts.values()) == 0.0


def test_wrong_never_reaches_correct():
    best_wrong = max(reward.score(_result(p))[0] for p in range(6))
    worst_correct = reward.score(_result(5, correct=True, speedup=0.01))[0]
    assert best_wrong == 0.4 and worst_correct == 0.5


def test_speed_credit_is_log_scaled_and_capped():
    s = lambda x: reward.score(_result(5, correct=True, speedup=x))[0]  # noqa: E731
    assert s(1.0) == 0.75 and s(4.0) == 1.0 and s(64.0) == 1.0 and s(0.25) == 0.5
    assert s(2.0) > s(1.5) > s(1.0)


def test_an_implausible_speedup_earns_no_speed_credit():
    value, parts = reward.score(_result(5, correct=True, speedup=50.0, flags=[F.IMPLAUSIBLE_SPEEDUP]))
    assert parts["speed"] == 0.0 and value == 0.5
