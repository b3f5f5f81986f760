"""Every task can be won: the best shipped honest Triton solution scores above the reference
submitted unchanged (which earns the same as doing nothing new), under the default settings, seed 0.

A task whose Triton solutions cannot win yet is listed in NOT_YET with what blocks it: it xfails
while it loses and fails the day it wins, so the entry must then go.
Every case evaluates several programs through the real harness: slow (run one with -k <task>).
"""
from __future__ import annotations

import pytest

from bench.gpu_rank import reference_as_submission
from bench.winnable import score_of, triton_solutions
from environment.tasks import get_task, list_tasks
from tests.support.evaluated import evaluated

NOT_YET: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(t.id for t in list_tasks()))
def test_the_best_shipped_triton_solution_beats_the_reference_copy(task_id):
    task = get_task(task_id)
    solutions = triton_solutions(task)
    assert solutions, f"{task_id} ships no correct Triton solution"
    reference, _, ref_flags = score_of(task, reference_as_submission(task), evaluated)
    best = max((score_of(task, p.read_text(), evaluated) + (p.stem,) for p in solutions), key=lambda r: r[0])
    won = best[0] > reference
    if task_id in NOT_YET:
        assert not won, f"{task_id} is won now ({best[3]} {best[0]:.3f} > {reference:.3f}): drop it from NOT_YET"
        pytest.xfail(NOT_YET[task_id])
    assert won, (f"{task_id}: best Triton {best[3]} scores {best[0]:.3f} (speedup {best[1]}, flags {best[2]}), "
                 f"the reference copy {reference:.3f} ({ref_flags})")
