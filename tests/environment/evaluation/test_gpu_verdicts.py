"""A verdict holds on a real GPU (issue 10): each new check is pinned by a plausible wrong solution of
the task library that the harness passed before the check existed and fails now, for the stated reason."""
from __future__ import annotations

import dataclasses
import textwrap

import pytest

from environment.config import harness_config
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.tasks import get_task, load_kernelbench

pytestmark = pytest.mark.slow


def _wrong(task_id: str, name: str):
    task = get_task(task_id)
    return evaluate(task, (task.folder / "solutions/wrong" / name).read_text(), seed=3, salt="gpu-verdicts")


def test_softmax_without_the_max_subtraction_fails_on_extreme_logits():
    result = _wrong("softmax", "triton_no_max_subtraction.py")
    assert not result.correct and result.correctness.mismatch.distribution == "extreme"
    assert "got nan" in result.correctness.error


def test_a_row_block_that_covers_every_listed_size_fails_on_a_hidden_shape_without_naming_it():
    for task_id, name in (("gelu_bias", "triton_row_block_4096.py"), ("logsumexp", "triton_block_4096.py")):
        result = _wrong(task_id, name)
        c = result.correctness
        assert not result.correct and c.trials_passed == c.trials_total - 1, task_id
        assert "a hidden shape" in c.error and c.mismatch.shape == {}, task_id


def test_a_default_precision_tl_dot_is_tf32_and_misses_the_fp32_tolerance_on_every_trial():
    result = _wrong("matmul_bias_relu", "triton_default_tf32.py")
    assert not result.correct and result.correctness.trials_passed == 0


def test_a_write_write_race_that_pid_order_repaired_is_named_and_fails():
    result = _wrong("l2_normalize", "triton_store_mask_numel.py")
    assert not result.correct and F.WRITE_RACE in result.flags and not F.is_hack(F.WRITE_RACE)
    assert result.correctness.error.startswith("a write-write race between programs: kernel `l2_normalize_kernel`: ")


def test_a_one_pass_variance_fails_on_rows_far_from_zero():
    result = _wrong("layernorm", "triton_one_pass_variance.py")
    assert not result.correct and result.correctness.mismatch.distribution == "extreme"


def test_an_honest_kernel_is_not_failed_where_the_fp32_reference_is_itself_wrong(tmp_path):
    """The float64 oracle decides who is right: here the fp32 reference rounds x to a multiple of 8."""
    src = tmp_path / "cancelling.py"
    src.write_text(textwrap.dedent("""
        import torch
        M, N = 33, 65

        class Model(torch.nn.Module):
            def forward(self, x):
                return (x + 1.0e8) - 1.0e8

        def get_inputs():
            return [torch.randn(M, N) * 100]

        def get_init_inputs():
            return []
    """))
    (task,) = load_kernelbench(src)
    exact = evaluate(task, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                           "        return x * 1.0\n")
    wrong = evaluate(task, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                           "        return x + 100.0\n")
    # every trial passes (the counted run of the modeled-speed stage re-checks against the fp32
    # reference alone, so the final verdict is that stage's)
    assert exact.correctness.trials_passed == exact.correctness.trials_total == 5, exact.correctness.error
    assert wrong.correctness.trials_passed == 0
    off = evaluate(task, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                         "        return x * 1.0\n", dataclasses.replace(harness_config(), fp64_oracle=False))
    assert off.correctness.trials_passed == 0  # judged against the fp32 reference alone, the exact kernel fails
