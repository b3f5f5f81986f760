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

pytestmark = pytest.mark.skipif(detect_backend() != "cpu", reason="modeled pricing and interpreter numerics")
TASK = get_task("matmul_bias_relu")


def _evaluated(kind: str, name: str):
    result = evaluate(TASK, (TASK.reference_path.parent / "solutions" / kind / name).read_text(), seed=0)
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
