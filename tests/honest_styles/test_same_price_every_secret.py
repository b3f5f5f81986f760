"""The same file gets the same score and speedup on every seed and in every fresh harness process, whatever its
secret (KERNEL_ENV_SECRET keys the trials and the GPU-shape sample): the price is a function of the file and
the task. Each evaluation runs in its own interpreter, as after a server restart. Each of these honest styles is
priced at the GPU shape too (no model's limit) and beats the task's reference submitted as-is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.gpu_rank import reference_as_submission
from environment import reward
from environment.evaluation.result import EvalResult
from environment.tasks import get_task
from tests.support.evaluated import evaluated

ROOT = Path(__file__).resolve().parents[2]
# a 2-D tile grid (classes by grid position), a persistent row loop (a line grid bisected to its step) and a
# persistent loop over 2-D tiles (a count periodic in pid: its line grid runs whole, line_grid.rest_of_line)
FILES = ["environment/tasks/problems/gelu_bias/solutions/correct/triton_2d_tiles.py",
         "environment/tasks/problems/rmsnorm/solutions/correct/triton_persistent_rows.py",
         "tests/honest_styles/silu_mul__persistent_range.py"]
# The child evaluates and prints the record; the score is computed here (the reward's import brings OpenEnv's
# server along, seconds of every fresh process, and the record round-trips whole as on the wire).
EVALUATE = """
import sys
from pathlib import Path
from environment.evaluation.harness import evaluate
from environment.tasks import get_task
path = Path(sys.argv[1])
print(evaluate(get_task(sys.argv[3]), path.read_text(), seed=int(sys.argv[2])).model_dump_json())
"""


def _task_of(path: Path) -> str:
    return path.name.split("__")[0] if "__" in path.name else path.parents[2].name


def _evaluate_fresh(path: Path, seed: int, secret: str) -> dict:
    env = dict(os.environ, KERNEL_ENV_SECRET=secret, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    task = _task_of(path)
    out = subprocess.run([sys.executable, "-c", EVALUATE, str(path), str(seed), task], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900, check=True)
    result = EvalResult.model_validate_json(out.stdout.strip().splitlines()[-1])
    p = result.performance
    return {"score": reward.score(result)[0], "speedup": p and p.speedup, "kind": p and p.speedup_kind,
            "gpu_shape": p and p.gpu_shape_speedup, "flags": list(result.flags), "correct": result.correct}


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_a_file_is_priced_alike_on_every_seed_and_secret(name):
    path = ROOT / name
    runs = [_evaluate_fresh(path, seed, secret) for seed, secret in enumerate(("alpha-0", "bravo-1", "charlie-2"))]
    assert runs[0]["correct"] and runs[0]["kind"] == "modeled" and not runs[0]["flags"], runs[0]
    assert runs[0]["gpu_shape"] is not None, runs[0]
    assert all(r == runs[0] for r in runs), runs
    task = get_task(_task_of(path))
    assert runs[0]["score"] > reward.score(evaluated(task, reference_as_submission(task), seed=0))[0], runs[0]


@pytest.mark.slow
def test_a_grid_stride_loop_past_the_whole_run_is_priced_on_a_draw_its_byte_estimate_fell_short():
    # 4 x 132 programs walk 1-D blocks pid, pid + G, ...: past line_grid.EXACT_LINE, so the sample is interpolated;
    # the partial last block puts two steps side by side, and under secret sweep-2 at seed 1 the estimated bytes
    # written fell 35-71 elements short of the output (about 2% of draws): "unreplayable" (0.5) by draw, until the
    # byte check took the coverage check's rounding slack (gpu_shape.judge)
    path = ROOT / "tests" / "honest_styles" / "gelu_bias__persistent_4x132.py"
    runs = [_evaluate_fresh(path, 1, secret) for secret in ("sweep-2", "alpha-0")]
    assert runs[0]["correct"] and runs[0]["kind"] == "modeled" and not runs[0]["flags"], runs[0]
    # the GPU-shape estimate itself moves in its fifth digit by draw; the credit (the lower price) and score do not
    assert [{**r, "gpu_shape": None} for r in runs[1:]] == [{**runs[0], "gpu_shape": None}], runs
