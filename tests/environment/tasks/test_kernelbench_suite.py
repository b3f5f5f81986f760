"""A fixed sample of 20 real KernelBench level-1/2 problems through the harness: each is refused
with a reason or evaluated as expected (the reference-as-ModelNew correct, a wrong variant wrong),
and no correct reference is failed as the submission's fault. The whole suite: bench/kernelbench.py."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from environment.tasks.kernelbench import problem_files
from environment.tasks.kernelbench_check import check_problem

KERNELBENCH = Path(__file__).resolve().parents[4] / "shared" / "kernelbench"  # beside the clone, never in it
SAMPLE = 20

pytestmark = pytest.mark.skipif(not (KERNELBENCH / "level1").is_dir(),
                                reason=f"KernelBench test data not found at {KERNELBENCH} (a sibling of the "
                                       "repository: ../shared/kernelbench); it is never copied into the project")


def _sample() -> list[Path]:
    files = problem_files(KERNELBENCH) if (KERNELBENCH / "level1").is_dir() else []
    return sorted(random.Random(11).sample(files, min(SAMPLE, len(files))))


@pytest.mark.slow
@pytest.mark.parametrize("path", _sample(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_kernelbench_problem_is_refused_with_a_reason_or_evaluated_as_expected(path):
    check = check_problem(path, seed=5)
    if not check.loaded:
        assert len(check.reason) > 20, check.reason
        return
    assert not check.blamed, check.detail
    assert check.as_expected, check.detail
