"""One KernelBench problem through the real harness, as a benchmark or a test sees it: loaded
(or refused with its reason), then the reference-as-ModelNew (must be correct) and a wrong variant
(must be wrong) evaluated. Shared by bench/kernelbench.py and tests/environment/tasks/test_kernelbench_suite.py."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from environment.evaluation.harness import evaluate
from environment.tasks.kernelbench import Unavailable, load_problem, reference_as_submission


@dataclass
class ProblemCheck:
    id: str
    loaded: bool
    reason: str = ""                 # why it was refused
    scaled: bool = False
    load_s: float = 0.0
    eval_s: list[float] = field(default_factory=list)
    right: Optional[str] = None      # the reference-as-ModelNew: correct, wrong, submission_failed or harness_error
    wrong: Optional[str] = None      # outcome of the wrong variant
    detail: str = ""                 # the first error met, for the table's notes

    @property
    def as_expected(self) -> bool:
        return self.loaded and self.right == "correct" and self.wrong == "wrong"

    @property
    def blamed(self) -> bool:
        """The correct submission was failed as if its own fault (a harness limit blamed on the code)."""
        return self.right in ("wrong", "submission_failed")


def _verdict(result) -> str:
    if result.outcome != "ok":
        return result.outcome
    return "correct" if result.correct else "wrong"


def _why(result) -> str:
    if result.outcome == "harness_error":
        return str(result.harness_error)[:300]
    if result.load and not result.load.ok:
        return str(result.load.error)[:300]
    c = result.correctness
    return str(c.error)[:300] if c and c.error else ""


def check_problem(path: Path, seed: int = 0) -> ProblemCheck:
    start = time.perf_counter()
    task = load_problem(path)
    load_s = time.perf_counter() - start
    if isinstance(task, Unavailable):
        return ProblemCheck(id=task.id, loaded=False, reason=task.reason, load_s=load_s)
    check = ProblemCheck(id=task.id, loaded=True, scaled=task.cpu_shapes != task.gpu_shapes, load_s=load_s)
    for wrong in (False, True):
        start = time.perf_counter()
        result = evaluate(task, reference_as_submission(task.reference_code, wrong=wrong), seed=seed)
        check.eval_s.append(time.perf_counter() - start)
        verdict = _verdict(result)
        if wrong:
            check.wrong = verdict
        else:
            check.right = verdict
        expected = "wrong" if wrong else "correct"
        if verdict != expected and not check.detail:
            check.detail = f"{'wrong variant' if wrong else 'reference'}: {verdict}: {_why(result)}"
    return check
