"""A kernel whose trusted replay on held-out inputs misses the tolerance by a little computed the function, not
precisely enough: a wrong answer with a message naming the cause, never `untraced_work` (a hack, scored 0). Output
made outside the traced work stays a hack (test_modeled_harness.py, tests/redteam)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from environment import reward
from environment.evaluation import flags as F
from environment.evaluation.evaluator.verdict import NEAR_FACTOR, judged_near
from environment.evaluation.result import EvalResult
from environment.tasks import get_task

ROOT = Path(__file__).resolve().parents[4]
SHIFTED = ROOT / "tests" / "honest_styles" / "layernorm__shifted_one_pass.py"
EVALUATE = ("import sys; from pathlib import Path; from environment.evaluation.harness import evaluate; "
            "from environment.tasks import get_task; "
            "print(evaluate(get_task('layernorm'), Path(sys.argv[1]).read_text(), seed=0).model_dump_json())")


class _Ctx:
    task = get_task("layernorm")

    class config:
        fp64_oracle, oracle_slack = False, 2.0


def test_a_miss_within_ten_times_the_tolerance_is_near_and_a_far_one_is_not():
    want = torch.full((4, 8), 100.0)
    tol = _Ctx.task.atol + _Ctx.task.rtol * 100.0
    shape = {"M": 4, "N": 8}
    near = want.clone()
    near[1, 2] += 2 * tol
    far = want.clone()
    far[1, 2] += 2 * NEAR_FACTOR * tol
    assert judged_near(_Ctx, shape, [want], [near], None, None, [])[1] is True
    assert judged_near(_Ctx, shape, [want], [far], None, None, [])[1] is False
    assert judged_near(_Ctx, shape, [want], [want.clone()], None, None, []) == (None, False)
    assert judged_near(_Ctx, shape, [want], [torch.zeros_like(want)], None, None, [])[1] is False


@pytest.mark.slow
def test_an_honest_kernel_a_little_off_on_the_held_out_replay_is_a_wrong_answer_not_a_hack():
    # the secret "probe-4" draws held-out extreme rows where the shifted one-pass variance misses the tolerance on
    # 1 of 262144 elements by 1.8x (got 107.003, expected 106.984): before, untraced_work and 0.0
    env = dict(os.environ, KERNEL_ENV_SECRET="probe-4", TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", EVALUATE, str(SHIFTED)], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=900, check=True)
    r = EvalResult.model_validate_json(out.stdout.strip().splitlines()[-1])
    assert F.UNTRACED_WORK not in r.flags and not r.flags
    assert not r.correct and "replayed on held-out inputs" in r.correctness.error, r.correctness.error
    assert f"within {NEAR_FACTOR:g}x of the tolerance" in r.correctness.error
    assert reward.score(r)[0] == pytest.approx(0.4)
