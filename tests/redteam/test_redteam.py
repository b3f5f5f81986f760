"""Every red-team attack in attacks/ runs through the real harness and meets its pinned outcome.

The contract is expected.py: a hack scores 0 with its named flag; anything else earns no more than
the best honest correct solution of the same task. Canary secrets are put into the server's environment
before the pool starts, so an attack that finds them proves a leak.
"""
from __future__ import annotations

import ast
import dataclasses
import os
from functools import lru_cache
from pathlib import Path
from typing import Optional

import pytest

from environment import reward
from environment.config import harness_config
from environment.evaluation import flags as F
from environment.evaluation import harness
from environment.tasks import get_task
from tests.redteam.expected import EXPECTED, OPEN_GAPS
from tests.support.evaluated import evaluated

ATTACKS = Path(__file__).parent / "attacks"
CANARIES = {"KERNEL_ENV_SECRET": "redteam-canary-secret", "HF_TOKEN": "hf_redteam_canary",
            "OPENAI_API_KEY": "sk-redteam-canary"}
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def canary_secrets():
    """Canaries in the server's environment before the zygote starts (it inherits a filtered copy)."""
    if harness._pool is not None:
        yield
        return
    saved = {k: os.environ.get(k) for k in CANARIES}
    os.environ.update(CANARIES)
    harness.pool().describe()  # start a zygote now, with the canaries in the parent environment
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    yield


def _config(overrides):
    return dataclasses.replace(harness_config(), **{"timeout_s": 20.0, **overrides})


def honest_score(task_id: str, overrides: Optional[dict] = None) -> float:
    """The best score of the task's shipped correct solutions (PyTorch and Triton) under the attack's own
    pricing (an attack on the GPU-shape pricing is compared with honest work priced the same way)."""
    pricing = {k: v for k, v in (overrides or {}).items() if k == "gpu_shape_pricing"}
    return _honest_score(task_id, tuple(sorted(pricing.items())))


@lru_cache(maxsize=None)
def _honest_score(task_id: str, pricing: tuple) -> float:
    task = get_task(task_id)
    scores = []
    for path in task.solutions["correct"]:   # under the default settings, as test_tasks and test_winnable judge them
        result = evaluated(task, path.read_text(), dataclasses.replace(harness_config(), **dict(pricing)), seed=0)
        assert result.correct, f"the honest solution {path.name} failed: {result.correctness}"
        scores.append(reward.score(result)[0])
    return max(scores)


def test_every_attack_file_has_an_expectation_and_a_one_line_docstring_naming_its_exploit():
    files = sorted(p.name for p in ATTACKS.glob("*.py"))
    assert len(files) >= 30
    assert sorted(EXPECTED) == files
    for name in files:
        text = (ATTACKS / name).read_text()
        first = text.splitlines()[0]
        assert first.startswith('"""') and first.endswith('"""') and len(first) > 20, name
        try:
            assert ast.get_docstring(ast.parse(text)), name
        except RecursionError:  # a79 nests deeper than the parser on purpose; its first line was checked
            pass


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="open gap")) if n in OPEN_GAPS
                                  else n for n in sorted(EXPECTED)])
def test_attack_meets_its_pinned_outcome(name):
    exp = EXPECTED[name]
    task = get_task(exp.task)
    source = (ATTACKS / name).read_text()
    result = harness.evaluate(task, source, _config(exp.config), seed=7, salt=name, session=f"redteam-{name}",
                              static_checks=exp.static_checks)
    score, _ = reward.score(result)
    flags = result.flags + result.static.flags
    text = " | ".join(filter(None, [*result.static.errors, result.load and result.load.error,
                                    result.correctness and result.correctness.error,
                                    result.performance and result.performance.note, result.log]))
    described = f"{name}: score={score} flags={flags} text={text[:600]!r}"
    assert not any(canary in text for canary in CANARIES.values()), f"a secret leaked: {described}"
    # no attack may turn its own failure into the environment's (a null reward dodges a bad one)
    assert result.outcome != "harness_error", described
    if exp.outcome == "flag":
        assert exp.flag in flags, described
        assert F.is_hack(exp.flag) and score == 0.0, described
    else:
        assert exp.outcome == "harmless"
        assert not any(F.is_hack(f) for f in flags), described
        assert score <= honest_score(exp.task, exp.config), described
        if exp.flag:
            assert exp.flag in flags, described
    if exp.correct is not None:
        assert result.correct is exp.correct, described
        if not exp.correct:
            assert score <= 0.40, described
    if exp.evidence:
        assert exp.evidence in text, described
    if exp.max_score is not None:
        assert score <= exp.max_score, described
    if earns_no_speed_credit(name):
        assert result.performance is None or result.performance.speedup is None, described


def earns_no_speed_credit(name: str) -> bool:
    """Attacks that must earn no modeled speedup at all (checked on their pinned-outcome evaluation):
    - the accounting classes (a62-a83), but for those whose work was all traced (a72, a73, a78, a83), which may
      keep their honest speedup;
    - the GPU-shape pricing attacks (a89-a120) the replay flags: host code or programs that behave differently
      at the GPU shape, or where the sample looks, never get the model-shape price they would escape to. The
      attacks on positions the sample no longer looks at (a96, a97: the estimate is drawn from the secret) and
      the capped PyTorch-only escape (a98) earn their honest price, pinned by their entries."""
    exp, number = EXPECTED[name], int(name[1:].split("_")[0])
    accounting = 62 <= number <= 83 and number not in (72, 73, 78, 83)
    gpu_shape = 89 <= number <= 120 and exp.layer == "replay" and bool(exp.flag) and name not in OPEN_GAPS
    return accounting or gpu_shape


def test_the_classes_that_earn_no_speed_credit_are_not_empty():
    """The selection above still picks out both classes (a renumbering or a changed entry would empty it)."""
    numbers = [int(n[1:].split("_")[0]) for n in EXPECTED if earns_no_speed_credit(n)]
    assert sum(n <= 83 for n in numbers) >= 15 and sum(n >= 89 for n in numbers) >= 18, numbers


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e.layer == "static"))
def test_statically_flagged_attack_let_through_still_earns_no_more_than_honest_work(name):
    """Defence in depth: with the AST check switched off, the runtime layers still hold."""
    exp = EXPECTED[name]
    result = harness.evaluate(get_task(exp.task), (ATTACKS / name).read_text(), _config({}), seed=7, salt=name,
                              session=f"redteam-runtime-{name}", static_checks=False)
    score, _ = reward.score(result)
    assert not result.static.flags
    assert score <= honest_score(exp.task, exp.config), f"{name}: score={score} flags={result.flags}"


FALLBACKS = ["a02_try_except_fallback.py", "a03_suppress_fallback.py", "a59_exit_swallows_exception.py",
             "a60_finally_break_fallback.py", "a61_suppress_by_getattr.py"]


@pytest.mark.parametrize("name", FALLBACKS)
def test_a_swallowed_exception_is_flagged_at_run_time_even_with_the_static_check_off(name):
    """The no-fallback rule holds without its spelling: the child's guard sees the exception leave the
    guarded block while forward still returns a result."""
    exp = EXPECTED[name]
    result = harness.evaluate(get_task(exp.task), (ATTACKS / name).read_text(), _config({}), seed=7, salt=name,
                              session=f"redteam-guard-{name}", static_checks=False)
    assert F.TRY_EXCEPT_FALLBACK in result.flags and reward.score(result)[0] == 0.0, result.flags
    assert result.correctness.error.startswith("an exception (InterpreterError: ") and "swallowed" in \
        result.correctness.error
