"""matmul_bias_relu's precision styles through the real harness (CPU host, modeled H100): a tf32x3 kernel is
correct and priced at the tensor-core rate, so it scores at least as well as the same kernel with ieee; a bf16x3
split is judged on its precision (right on some trials, wrong only on a few elements where its ~16 bits
fall short), not as
garbage from multiplied bit patterns."""
from __future__ import annotations

import pytest

from environment.config import detect_backend
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.reward import score
from environment.tasks import get_task
from tests.support.evaluated import evaluated

pytestmark = pytest.mark.skipif(detect_backend() != "cpu", reason="modeled pricing and interpreter numerics")
TASK = get_task("matmul_bias_relu")


def _evaluated(kind: str, name: str):
    # shipped solutions at seed 0 under the default settings: the evaluations test_tasks (and the red team's honest
    # bar) make, shared with them in a run
    result = evaluated(TASK, (TASK.reference_path.parent / "solutions" / kind / name).read_text(), seed=0)
    assert result.outcome == "ok", result.harness_error
    return result, score(result)[0]


def test_tf32x3_is_correct_and_scores_at_least_as_well_as_ieee():
    tf32x3, tf32x3_score = _evaluated("correct", "triton_tf32x3.py")
    ieee, ieee_score = _evaluated("correct", "triton_tiled.py")
    assert tf32x3.correct and ieee.correct and not tf32x3.hacked
    assert tf32x3.performance.speedup > ieee.performance.speedup
    assert tf32x3_score >= ieee_score
    dots = {k for launch in tf32x3.performance.modeled_candidate.launches for k in launch.flops if k.startswith("dot")}
    assert dots == {"dot_tf32x3"}


def test_a_bf16x3_split_is_judged_on_its_precision():
    result, total = _evaluated("wrong", "triton_bf16x3_split.py")
    c = result.correctness
    assert not result.correct and not result.hacked and F.OUTPUT_NOT_TENSOR not in result.flags
    assert c.trials_passed >= 1  # the products are right: before, bit patterns multiplied gave ~1e11 everywhere
    assert c.mismatch.mismatched < 0.01 * c.mismatch.total  # a few elements where ~16 bits fall short
    # (no bound on the mean error: on an extreme trial the few elements off can be off by ~100, a mean of ~0.2)
    assert 0.10 < total < 0.50


@pytest.mark.parametrize("precision,correct", [("bf16x6", True), ("bf16x3", False)])
def test_sm90s_bf16_splits_run_in_the_interpreter_and_are_charged_as_bf16_passes(precision, correct):
    # the interpreter admits only tf32, tf32x3 and ieee; sm_90 Triton also bf16x3 and bf16x6 (three or six bf16
    # tensor-core products of fp32 split into bf16 terms). bf16x6 is about fp32-accurate: correct, priced at six bf16
    # passes; bf16x3 (~16 bits) misses the tolerance on the wide-input trial, a wrong answer, as on the GPU
    source = (TASK.reference_path.parent / "solutions" / "correct" / "triton_tf32x3.py").read_text()
    assert source.count('acc, input_precision="tf32x3")') == 1
    result = evaluate(TASK, source.replace('acc, input_precision="tf32x3")', f'acc, input_precision="{precision}")'),
                      seed=0)
    assert result.outcome == "ok" and not result.hacked, result.harness_error
    assert result.correct is correct, result.correctness.error
    assert "input_precision must be one of" not in (result.correctness.error or "")
    if correct:
        dots = {k for launch in result.performance.modeled_candidate.launches for k in launch.flops
                if k.startswith("dot")}
        assert dots == {"dot_bf16"} and result.performance.speedup is not None
    else:
        assert result.correctness.mismatch.mismatched < 0.01 * result.correctness.mismatch.total
