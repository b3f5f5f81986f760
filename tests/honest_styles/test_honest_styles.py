"""Honest kernels in styles no shipped solution uses, evaluated through the real harness on two seeds. A priced
style must be priced (modeled, no unreplayable or size_dependent), score the same on both seeds and no less than
the reference submitted as-is. The styles the harness cannot price yet are strict xfails naming the cause, so the
day one is priced the entry must move. (Four more styles are shipped solutions: layernorm/triton_welford_reduce,
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
PRICED = ["softmax__autotune_online"]   # @triton.autotune over BLOCK_N, online max/sum then a write pass
# silu_mul__persistent_range (tl.range over 2-D tiles) is priced on most draws and unreplayable on some: the
# sampled programs are drawn from a per-process secret, so its evaluation is not a fixed verdict; the cause is
# pinned deterministically by test_a_persistent_grid_over_2d_tiles_is_estimated_within_the_slack below
LIMITS = {
    # row statistics over M programs, then an elementwise kernel over a 32 x 128 tile grid: the second launch reads
    # mean/rstd that unsampled programs of the first write (ProvenanceLedger taints it)
    "layernorm__two_kernels": "launches that feed each other over different grids are not replayed",
    # split-K into a zeroed buffer with tl.atomic_add, then bias + ReLU over a 1-D tiling: the zeroed buffer is
    # clean aten data, so the epilogue's reads of sums no sampled program added are not tainted; it reads zeros and
    # is called size_dependent ("host code must launch the same computation") instead of unreplayable
    "matmul_bias_relu__splitk_atomic": "a consumer of a sampled atomic launch reads unfinished sums",
    # two autotuned tf32x3 GEMMs: fc2 reads the hidden activations unsampled fc1 programs write (as the shipped
    # mlp_block solution)
    "mlp_block__tf32x3_autotune": "launches that feed each other over different grids are not replayed",
}


def _priced_alike_and_not_below_the_copy(name: str) -> None:
    task = get_task(name.split("__")[0])
    source = (HERE / f"{name}.py").read_text()
    scores = []
    for seed in (1, 2):
        result = evaluate(task, source, seed=seed)
        perf = result.performance
        assert result.correct and perf and perf.speedup_kind == "modeled", (result.flags, perf and perf.note)
        assert not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags), perf.note
        scores.append((reward.score(result)[0], perf.speedup))
    assert scores[0] == scores[1]
    copy = evaluate(task, reference_as_submission(task), seed=1)
    assert scores[0][0] >= reward.score(copy)[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", PRICED)
def test_an_honest_style_is_priced_alike_on_every_seed(name):
    _priced_alike_and_not_below_the_copy(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
                                  for n, why in sorted(LIMITS.items())])
def test_an_honest_style_the_harness_cannot_price_yet(name):
    _priced_alike_and_not_below_the_copy(name)


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
