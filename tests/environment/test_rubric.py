"""The reward is an OpenEnv rubric tree: gates and weighted parts, whose root is the step's reward and
whose parts are the breakdown. Checked against the formula's specification on synthetic records and,
through the environment, on every shipped solution of the graded tasks."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from openenv.core.rubrics import Gate, Rubric, Sequential, WeightedSum

from environment.env import KernelEnvironment
from environment.evaluation import flags as F
from environment.evaluation.result import (CorrectnessResult, EvalResult, LoadResult, PerformanceResult, Signal,
                                           StaticResult)
from environment.models import KernelAction
from environment.rubric import KernelRubric, score
from environment.tasks import GRADED_TASKS

PROBLEMS = Path(__file__).resolve().parents[2] / "environment" / "tasks" / "problems"


def spec(result: EvalResult) -> float:
    """The formula as the README states it (kept here, apart from the tree, as the specification)."""
    if result.hacked:
        return 0.0
    parts = [0.10 if result.compiled else 0.0]
    c = result.correctness
    parts.append(round(0.30 * c.trials_passed / c.trials_total, 6) if c and c.trials_total else 0.0)
    if result.correct:
        parts.append(0.10)
        p = result.performance
        if p and p.speedup is not None and F.IMPLAUSIBLE_SPEEDUP not in result.flags:
            s = min(1.0, max(0.0, (math.log2(max(p.speedup, 1e-9)) + 2) / 4))
            parts.append(round(0.50 * s, 6))
    return min(1.0, round(sum(parts), 6))


def _result(passed, total=5, correct=False, speedup=None, flags=(), compiled=True, signals=()):
    return EvalResult(
        task_id="t", backend="cpu", static=StaticResult(ok=True), load=LoadResult(ok=compiled),
        correctness=CorrectnessResult(correct=correct, trials_passed=passed, trials_total=total) if compiled else None,
        performance=PerformanceResult(speedup=speedup, speedup_kind="modeled") if speedup else None,
        flags=list(flags), signals=list(signals))


def test_the_tree_is_built_from_openenv_gates_and_a_weighted_sum():
    root = KernelRubric()
    kinds = {name: type(r) for name, r in root.named_rubrics()}
    assert isinstance(root, Rubric) and kinds["rubric"] is Sequential
    assert sum(k is Gate for k in kinds.values()) == 4  # not hacked, no veto, compiled (trials), correct (speed)
    weighted = [r for r in root.rubrics() if isinstance(r, WeightedSum)]
    assert len(weighted) == 1 and weighted[0].weights == [0.10, 0.30, 0.10, 0.50]


@given(st.integers(0, 7), st.integers(1, 7), st.booleans(), st.one_of(st.none(), st.floats(0.001, 1000.0)),
       st.booleans(), st.booleans())
def test_root_reproduces_the_formula_and_the_parts_sum_to_it(passed, total, correct, speedup, compiled, implausible):
    passed = min(passed, total)
    result = _result(passed, total, correct=correct and passed == total, speedup=speedup, compiled=compiled,
                     flags=[F.IMPLAUSIBLE_SPEEDUP] if implausible else [])
    value, parts = score(result)
    assert math.isclose(value, spec(result), abs_tol=1e-6) and 0.0 <= value <= 1.0
    assert math.isclose(sum(parts.values()), value, abs_tol=1e-6)


def test_a_hack_and_a_veto_close_their_gates_and_zero_every_part():
    root = KernelRubric()
    assert root(None, _result(5, correct=True, speedup=2.0)) > 0.5
    assert root(None, _result(5, correct=True, speedup=2.0, flags=[F.DECOY_KERNEL])) == 0.0
    assert root.gates_closed() == ["not_hacked"] and set(root.breakdown().values()) == {0.0}
    veto = Signal(name="physics_floor", verdict="veto", why="faster than the hardware allows")
    assert root(None, _result(5, correct=True, speedup=2.0, signals=[veto])) == 0.0
    assert root.gates_closed() == ["no_veto"]
    disagree = Signal(name="static_rules", verdict="disagree", why="looks like a decoy")
    assert root(None, _result(5, correct=True, speedup=2.0, signals=[disagree])) == score(_result(5, correct=True,
                                                                                                speedup=2.0))[0]


def test_the_environment_uses_the_rubric_the_openenv_way():
    env = KernelEnvironment()
    assert isinstance(env.rubric, KernelRubric)


def _solutions():
    for task in GRADED_TASKS:
        for path in sorted((PROBLEMS / task / "solutions").glob("*/*.py")):
            yield pytest.param(task, path, id=f"{task}/{path.parent.name}/{path.stem}")


@pytest.mark.slow
@pytest.mark.parametrize("task,path", list(_solutions()))
def test_every_shipped_solution_step_reward_is_the_rubric_root(task, path):
    env = KernelEnvironment()
    env.reset(seed=7, task_id=task)
    obs = env.step(KernelAction(code=path.read_text()))
    assert obs.outcome != "harness_error", obs.error
    assert obs.reward == env.rubric.last_score == obs.score
    assert obs.reward_breakdown == env.rubric.breakdown()
    assert math.isclose(obs.reward, spec(obs.evaluation), abs_tol=1e-6)  # today's score
    assert obs.correct == (path.parent.name == "correct")
    flagged = [s for s in obs.evaluation.signals if s.verdict in ("veto", "disagree")]
    assert not flagged, flagged  # honest work: no veto, no disagreement
    assert {s.name for s in obs.evaluation.signals} >= {"static_rules", "physics_floor", "own_kernel_share",
                                                         "measured_vs_modeled"}
