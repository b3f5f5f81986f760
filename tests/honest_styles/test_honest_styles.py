"""Honest kernels in styles no shipped solution uses, evaluated through the real harness on two seeds. Each
must be priced (modeled, no unreplayable or size_dependent), score the same on both seeds and no less than the
reference submitted as-is; those priced below the copy are listed with the cause (they xfail while below it and
fail the day they are not, so the entry must then go). (Four more styles are shipped solutions: layernorm/triton_welford_reduce,
logsumexp/triton_heuristics_rows, cross_entropy/triton_reduce_combine_atomic, causal_attention/triton_grid3d_tf32x3.)
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.gpu_rank import reference_as_submission
from environment import reward
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

HERE = Path(__file__).parent
# Priced at every seed alike (modeled, neither unreplayable nor size_dependent). The last three are pipelines over
# different tilings: the sampled replay's dependency closure (replay/closure.py) runs the producer programs a sampled
# consumer reads (layernorm: priced at the GPU shape too), or names its bound as the model's limit and prices them at
# the model shape, capped at 1x (split-K: one epilogue program reads sums of ~50 x 4 GEMM programs; mlp_block's
# grouped program order is no affine tiling)
PRICED = ["softmax__autotune_online", "layernorm__two_kernels", "matmul_bias_relu__splitk_atomic",
          "mlp_block__tf32x3_autotune",
          # a module-level import guard (static/import_guard.py) on a 2x elementwise kernel
          "static_fp/gelu_bias__import_version_guard",
          # from the static sweep: split-K whose pid_k == 0 slice adds the bias (the closure's bound, as above), and a
          # persistent matmul on min(NUM_SMS, tiles) programs whose programs run past the sampler's budget at the GPU
          # shape: the model's limit, priced at the model shape capped at 1x because its grid fills the GPU
          "static_fp/matmul_bias_relu__splitk_first_slice_adds_bias", "static_fp/matmul_bias_relu__persistent_num_sms"]
# silu_mul__persistent_range (tl.range over 2-D tiles) is priced on most draws and unreplayable on some: the
# sampled programs are drawn from a per-process secret, so its evaluation is not a fixed verdict; the cause is
# pinned deterministically by test_a_persistent_grid_over_2d_tiles_is_estimated_within_the_slack below
BELOW_THE_COPY = {
    # at the model shape (64 x 4096) two launches on the 2 us floor against ATen's one: 0.596x
    "layernorm__two_kernels": "two launches against one at a model shape where every launch sits on the floor",
    # three launches (zeroing, split-K, epilogue) at 256^3 against addmm's: 0.81x; the GPU shape is the model's limit
    "matmul_bias_relu__splitk_atomic": "three launches at the model shape, the GPU shape past the closure's bound",
    # the GPU shape past the closure's bound (grouped order), so at most 1x, and below it at the model shape
    "mlp_block__tf32x3_autotune": "priced at the model shape only (the closure's bound), where it is below 1x",
    # at the model shape (256^3) 0.955x: three launches (zeroing, split-K, ReLU) against addmm's
    "static_fp/matmul_bias_relu__splitk_first_slice_adds_bias": "three launches at the model shape, the GPU shape "
                                                                 "past the closure's bound",
}


def _priced_alike(name: str) -> tuple:
    task = get_task(Path(name).name.split("__")[0])
    source = (HERE / f"{name}.py").read_text()
    scores = []
    for seed in (1, 2):
        result = evaluate(task, source, seed=seed)
        perf = result.performance
        assert result.correct and perf and perf.speedup_kind == "modeled", (result.flags, perf and perf.note)
        assert not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags), perf.note
        scores.append((reward.score(result)[0], perf.speedup))
    assert scores[0] == scores[1]
    return task, scores[0][0]


@pytest.mark.slow
@pytest.mark.parametrize("name", PRICED)
def test_an_honest_style_is_priced_alike_on_every_seed(name):
    task, score = _priced_alike(name)
    if name in BELOW_THE_COPY:
        copy = evaluate(task, reference_as_submission(task), seed=1)
        assert score < reward.score(copy)[0], f"{name} now scores {score:.3f}: drop it from BELOW_THE_COPY"
        pytest.xfail(BELOW_THE_COPY[name])
    copy = evaluate(task, reference_as_submission(task), seed=1)
    assert score >= reward.score(copy)[0]


def _persistent_2d_stores(pid: int, grid: int, m: int, n: int, bm: int, bn: int) -> int:
    """Elements program pid of silu_mul__persistent_range stores: tiles pid, pid + grid, ... of (m/bm) x (n/bn)."""
    tiles_n = -(-n // bn)
    return sum(min(bm, m - (t // tiles_n) * bm) * min(bn, n - (t % tiles_n) * bn)
               for t in range(pid, -(-m // bm) * tiles_n, grid))


@pytest.mark.xfail(strict=True, reason="coverage interpolation assumes one step in a persistent grid's stores")
def test_a_persistent_grid_over_2d_tiles_is_estimated_within_the_slack():
    # silu_mul at its GPU shape 4097 x 3001: 132 programs walk 8 x 512 tiles; 132 % 6 == 0, so program pid keeps
    # column pid % 6 and every sixth program stores the partial (441-wide) column: the stored count is periodic
    # in pid, and interpolating between these sampled interior programs (one draw of many) falls 0.7% short
    from environment.evaluation.replay.coverage import COVERAGE_SLACK, program_weights
    grid, pids = 132, [0, 1, 17, 54, 68, 82, 115, 124, 130, 131]
    stored = [_persistent_2d_stores(p, grid, 4097, 3001, 8, 512) for p in pids]
    assert sum(_persistent_2d_stores(p, grid, 4097, 3001, 8, 512) for p in range(grid)) == 4097 * 3001
    weights = program_weights([((p, 0, 0), "stratum") for p in pids], (grid, 1, 1), stored)
    estimate = sum(w * s for w, s in zip(weights, stored)) / (4097 * 3001)
    assert estimate >= 1 - COVERAGE_SLACK, estimate
