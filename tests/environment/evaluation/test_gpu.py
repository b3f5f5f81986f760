"""The CUDA path (compiled Triton, CUDA-event timing with L2 flush). Skipped on CPU hosts."""
import pytest

from environment.evaluation.harness import evaluate
from environment.tasks import get_task

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("prefix", ["triton", "torch"])
def test_a_correct_solution_is_timed_with_cuda_events(prefix):
    task = get_task("gelu_bias")
    path = next(p for p in task.solutions["correct"] if p.name.startswith(prefix))
    result = evaluate(task, path.read_text(), seed=0)
    assert result.backend == "cuda" and result.correct, result.correctness
    p = result.performance
    assert p.speedup_kind == "measured_cuda" and p.speedup > 0 and p.candidate.samples >= 3


def test_a_wrong_solution_fails_on_the_gpu_too():
    task = get_task("gelu_bias")
    result = evaluate(task, task.solutions["wrong"][0].read_text(), seed=0)
    assert not result.correct
