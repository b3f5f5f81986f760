"""Each task's reference, submitted unchanged as ModelNew, is correct and models at 1.0x: the same
code must cost the same on both sides. (Found measuring on an H100, issue 15: SDPA's CPU kernel had
no cost model in the trusted replay, so a submission calling exactly the reference's op got no
speed credit.)"""
from __future__ import annotations

import pytest

from bench.gpu_rank import reference_as_submission
from environment.tasks import get_task, list_tasks
from tests.support.evaluated import evaluated


@pytest.mark.parametrize("task_id", sorted(t.id for t in list_tasks()))
def test_the_reference_as_a_submission_is_correct_and_models_at_one(task_id):
    task = get_task(task_id)
    result = evaluated(task, reference_as_submission(task), seed=0)   # shared with test_tasks and test_winnable
    assert result.outcome == "ok" and result.correct, (result.harness_error, result.correctness)
    perf = result.performance
    assert perf.speedup_kind == "modeled", perf.note
    assert perf.speedup == pytest.approx(1.0, rel=1e-9), perf.note
