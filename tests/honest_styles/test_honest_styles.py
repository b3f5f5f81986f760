"""Honest kernels in styles no shipped solution uses, evaluated through the real harness on two seeds. Each
must be priced (modeled, no unreplayable or size_dependent), score the same on both seeds and no less than the
reference submitted as-is; those priced below the copy are listed with the cause (they xfail while below it and
fail the day they are not, so the entry must then go). (Four more styles are shipped solutions: layernorm/triton_welford_reduce,
logsumexp/triton_heuristics_rows, cross_entropy/triton_reduce_combine_atomic, causal_attention/triton_grid3d_tf32x3.)
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bench.gpu_rank import reference_as_submission
from environment import feedback, reward
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.tasks import get_task
from tests.support.evaluated import evaluated

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
          "static_fp/matmul_bias_relu__splitk_first_slice_adds_bias", "static_fp/matmul_bias_relu__persistent_num_sms",
          # the prompt's big tf32x3 tile on a fixed grid (below the copy: see BELOW_THE_COPY)
          "matmul_bias_relu__tf32x3_fixed_128_tiles",
          # grids rounded up to a multiple of 132 programs, those past the last block or tile returning at once: the
          # sampler bisects the step into the idle tail (line_grid.tail_probe), a line and a line over 2-D tiles
          "gelu_bias__overlaunch_blocks", "gelu_bias__overlaunch_tiles",
          # a fixed grid of 1056 programs over 1024 row blocks, each loading the weight before its loop: the idle
          # tail reads and stores nothing else
          "rmsnorm__persistent_1056_hoisted_weight",
          # unmasked blocks, the last shifted back to end at the last element (re-storing most of its neighbour's):
          # the programs every draw runs count their own stores as they are (coverage.output_coverage)
          "gelu_bias__shifted_last_block",
          # the tutorial's masked kernel on a grid rounded up to a multiple of 132: the tail's stores are masked whole
          # (the tile lattice's inference crashed on their empty address lists: unreplayable)
          "gelu_bias__overlaunch_masked",
          # a producer storing rows and their norms (two strides: a tiling of each allocation, producer.py) that a copy
          # reads (the closure crashed on it: unreplayable; then the model's limit, capped at 1x; below the copy now)
          "l2_normalize__rows_and_norms_then_copy",
          # three launches, the last in place on a flat grid rounded up to a multiple of 132: its probes read what
          # unrun programs of the 2-D pass store, so each runs after its own closure (capped at 1x on most seeds
          # while they ran without one)
          "rmsnorm__rstd_scale_weight_3launch_inplace_grid_rounded_132"]
# (layernorm__shifted_one_pass, a one-pass variance shifted by the row's first element, is honest but not stable
# where that element is a row's dominant entry: on one secret in sixteen the held-out replay misses the tolerance
# by 1.8x on one element, a wrong answer: tests/environment/evaluation/modeled/test_near_miss.py)
# (silu_mul__persistent_range, tl.range over 2-D tiles on 132 programs whose stores are periodic in pid, so the
# GPU-shape replay runs its whole line grid: priced alike on every seed and secret in test_same_price_every_secret)
BELOW_THE_COPY = {
    # at the GPU shape 0.798x: its rows written twice (the normalised rows, then their copy into out) against the
    # reference's one output pass
    "l2_normalize__rows_and_norms_then_copy": "the rows are written twice, against the reference's once",
    # at the model shape (64 x 4096) two launches on the 2 us floor against ATen's one: 0.596x
    "layernorm__two_kernels": "two launches against one at a model shape where every launch sits on the floor",
    # three launches (zeroing, split-K, epilogue) at 256^3 against addmm's: 0.81x; the GPU shape is the model's limit
    "matmul_bias_relu__splitk_atomic": "three launches at the model shape, the GPU shape past the closure's bound",
    # the GPU shape past the closure's bound (grouped order), so at most 1x, and below it at the model shape
    "mlp_block__tf32x3_autotune": "priced at the model shape only (the closure's bound), where it is below 1x",
    # at the model shape (256^3) 0.955x: three launches (zeroing, split-K, ReLU) against addmm's
    "static_fp/matmul_bias_relu__splitk_first_slice_adds_bias": "three launches at the model shape, the GPU shape "
                                                                 "past the closure's bound",
    # 128x128 tiles whatever the size: 4 programs at the 256^3 model shape (0.713x) against 2.31x at the GPU shape;
    # the credit is the lower (the prompt names both sizes; picking tiles by size scores 0.884, as shipped)
    "matmul_bias_relu__tf32x3_fixed_128_tiles": "4 programs at the model shape, where the credit is made",
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
    copy = evaluated(task, reference_as_submission(task), seed=0)   # the copy's evaluation, shared across the suite
    if name in BELOW_THE_COPY:
        assert score < reward.score(copy)[0], f"{name} now scores {score:.3f}: drop it from BELOW_THE_COPY"
        pytest.xfail(BELOW_THE_COPY[name])
    assert score >= reward.score(copy)[0]


@pytest.mark.slow
def test_a_grid_rounded_up_past_its_tiles_is_priced_as_its_exact_twin():
    # 63 of 128 row blocks return at once (gelu_bias at 4097 x 3001 in 64 x 128 tiles): the idle part takes no wave
    # slot and spills nothing (model.launch_cost), where it was priced 54.70 us against the exact grid's 36.12 us
    task = get_task("gelu_bias")
    rounded = (HERE / "gelu_bias__rows_rounded_to_pow2_2d.py").read_text()
    exact = rounded.replace("triton.next_power_of_2(triton.cdiv(M, BLOCK_M))", "triton.cdiv(M, BLOCK_M)")
    assert exact != rounded
    gpu = []
    for source in (rounded, exact):
        result = evaluate(task, source, seed=1)
        assert result.correct and not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags), result.performance.note
        (launch,) = result.performance.modeled_candidate.launches
        gpu.append((launch.time_us, launch.programs - launch.idle_programs, reward.score(result)[0]))
        if source == rounded:   # the learner is told what was left out
            assert "1512 of its 3072 programs idle" in feedback.render(result, *reward.score(result))
    assert gpu[0] == gpu[1]


def _gelu_twin(in_place: str) -> str:
    twin = in_place.replace("gelu_flat_inplace[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)\n        return out",
                            "res = torch.empty_like(out)\n        gelu_flat[(triton.cdiv(n, 1024),)](out, res, n, "
                            "BLOCK=1024)\n        return res").replace(
        "def gelu_flat_inplace(y_ptr, n,", "def gelu_flat(y_ptr, r_ptr, n,").replace(
        "tl.store(y_ptr + offs, 0.5", "tl.store(r_ptr + offs, 0.5")
    assert twin.count("r_ptr") == 2 and "res" in twin
    return twin


def _rstd_twin(in_place: str) -> str:
    twin = in_place.replace("rstd_rows_inplace(x_ptr, y_ptr, rstd_ptr,", "rstd_rows_inplace(x_ptr, y_ptr, o_ptr, rstd_ptr,")
    twin = twin.replace("tl.store(y_ptr + row * stride + cols, y * r", "tl.store(o_ptr + row * stride + cols, y * r")
    twin = twin.replace("rstd_rows_inplace[(M,)](x, out, rstd, N, x.stride(0), 1e-6, BLOCK=1024)\n        return out",
                        "res = torch.empty_like(out)\n        rstd_rows_inplace[(M,)](x, out, res, rstd, N, x.stride(0), "
                        "1e-6, BLOCK=1024)\n        return res")
    assert twin.count("o_ptr") == 2 and "return res" in twin
    return twin


# In-place passes over what an earlier launch over another tiling stored, each with its out-of-place twin: a 2-D add,
# then a flat GELU in place (0.50 size_dependent where the twin scored 0.743); out = x * w over 16 x 512 tiles, then
# row programs scaling their row of out in place and saving its rstd into a second buffer (the row and its rstd move
# by different steps: no one tiling; 0.50 size_dependent where the twin scored 0.815)
IN_PLACE_TWINS = {
    "gelu_bias__2d_add_then_flat_gelu_inplace": _gelu_twin,
    "rmsnorm__weight_2d_then_rows_inplace_save_rstd": lambda in_place: _rstd_twin(in_place),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", IN_PLACE_TWINS)
def test_an_in_place_pass_over_another_tiling_is_priced_as_its_out_of_place_twin(name):
    # where the earlier launch's programs (sampled, or run by the dependency closure) stored and no sampled program
    # of the in-place pass did, the element holds the intermediate value, which the pass's unrun programs overwrite
    # on a GPU (replay/final_values.py): compared, it read as a wrong result at the GPU shape
    task = get_task(name.split("__")[0])
    in_place = (HERE / f"{name}.py").read_text()
    got = []
    for source in (in_place, IN_PLACE_TWINS[name](in_place)):
        result = evaluate(task, source, seed=1)
        assert result.correct and not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags), result.performance.note
        got.append((result.performance.speedup, reward.score(result)[0]))
    assert got[0] == got[1]


@pytest.mark.slow
def test_a_consumer_grid_rounded_up_in_a_pipeline_is_priced_as_its_exact_twin():
    # the GPU GELU's row blocks past the last return at once: its tail probes read what unrun programs of the add
    # store, so each probe runs after its own dependency closure (replay/sampled.py); without probes, the sampled
    # idle programs read as stray writers (unreplayable, 0.50)
    task = get_task("gelu_bias")
    rounded = (HERE / "gelu_bias__2d_add_then_rounded_2d_gelu.py").read_text()
    exact = rounded.replace("triton.next_power_of_2(triton.cdiv(M, 64))", "triton.cdiv(M, 64)")
    assert exact != rounded
    gpu = []
    for source in (rounded, exact):
        result = evaluate(task, source, seed=1)
        assert result.correct and not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags), result.performance.note
        gpu.append([(launch.time_us, launch.programs - launch.idle_programs)
                    for launch in result.performance.modeled_candidate.launches])
    assert gpu[0] == gpu[1]


def _persistent_2d_stores(pid: int, grid: int, m: int, n: int, bm: int, bn: int, skip: int = 0) -> int:
    """Elements program pid of silu_mul__persistent_range stores: tiles pid, pid + grid, ... of (m/bm) x (n/bn)
    (but every skip-th tile, when skip is set: red team a213)."""
    tiles_n = -(-n // bn)
    return sum(min(bm, m - (t // tiles_n) * bm) * min(bn, n - (t % tiles_n) * bn)
               for t in range(pid, -(-m // bm) * tiles_n, grid) if not skip or t % skip != skip - 1)


def _estimated_coverage(counts: list[int], seed: int, accesses: int) -> tuple[float, int]:
    """The coverage the GPU-shape replay estimates for a line grid whose program pid stores counts[pid] elements
    (each executing at most `accesses` memory instructions), for the draw of `seed`: the sampler's own choice of
    programs, probes and rest of the grid (line_grid.sample_line), weighed by coverage.program_weights. Returns the
    estimate (in elements) and the programs run."""
    from environment.evaluation.replay import line_grid, sampled
    from environment.evaluation.replay.coverage import program_weights
    grid = (len(counts), 1, 1)
    chosen = sampled.choose_programs(grid, seed)
    chosen = chosen + line_grid.line_probes(grid, chosen)
    ran = list(chosen)   # the programs run, in run order (run() appends to it)
    added = line_grid.sample_line(grid, chosen, ran.extend,
                                  lambda k: (np.array([counts[p[0]] for p, _ in ran[:k]], dtype=np.float64), accesses))
    assert ran == chosen + added
    stored = [counts[p[0]] for p, _ in ran]
    return math.fsum(w * s for w, s in zip(program_weights(ran, grid, stored), stored)), len(ran)


# silu_mul at its GPU shape 4097 x 3001 in 8 x 512 tiles: 132 % 6 == 0, so program pid keeps column pid % 6 and every
# sixth program stores the partial (441-wide) column (period 6); 16 x 256 tiles: 12 columns, period 12; 128 programs
# over 6 columns: period 3. Interpolating between the sampled programs erred by up to 4% either way by draw (one
# draw in 8 fell past COVERAGE_SLACK: the same file priced on some seeds and unreplayable on others)
PERIODIC = [(132, 8, 512), (132, 16, 256), (128, 8, 512)]


@pytest.mark.parametrize("grid,bm,bn", PERIODIC)
def test_a_persistent_grid_over_2d_tiles_is_counted_exactly_on_every_draw(grid, bm, bn):
    counts = [_persistent_2d_stores(p, grid, 4097, 3001, bm, bn) for p in range(grid)]
    assert sum(counts) == 4097 * 3001 and len(set(counts[1:-1])) > 2
    iterations = -(-(-(-4097 // bm) * -(-3001 // bn)) // grid)
    for seed in range(40):
        estimate, ran = _estimated_coverage(counts, seed, 3 * iterations)
        assert ran == grid and estimate == 4097 * 3001, (seed, ran, estimate)


def test_tiles_skipped_in_a_periodic_persistent_grid_fall_short_on_every_draw():
    # red team a213: one tile in 64 never computed at the GPU shape (1.6% of the output) hides in no interpolation
    from environment.evaluation.replay.coverage import COVERAGE_SLACK
    counts = [_persistent_2d_stores(p, 132, 4097, 3001, 8, 512, skip=64) for p in range(132)]
    for seed in range(40):
        estimate, ran = _estimated_coverage(counts, seed, 72)
        assert ran == 132 and estimate == sum(counts) < (1 - COVERAGE_SLACK) * 4097 * 3001, (seed, estimate)


def test_a_line_grid_past_the_exact_runs_bounds_keeps_its_sample_and_its_interpolation():
    from environment.evaluation.replay import line_grid
    counts = [_persistent_2d_stores(p, 132, 4097, 3001, 8, 512) for p in range(132)]
    assert _estimated_coverage(counts, 0, line_grid.EXACT_ACCESSES // 100)[1] < 132   # the grid would execute too much
    # rmsnorm's persistent row blocks at 8192 x 4096 (the first 8 of 132 programs walk one block more: a step the
    # probes close) execute ~190 memory instructions each: the grid is past EXACT_ACCESSES, and the interpolation
    # is exact for a step on every draw
    rows = [4096 * (8192 // 132 + (p < 8192 % 132)) for p in range(132)]
    for seed in range(20):
        estimate, ran = _estimated_coverage(rows, seed, 190)
        assert ran < 132 and estimate == 8192 * 4096, (seed, ran, estimate)
    wide = rows + [4096] * (line_grid.EXACT_LINE + 1 - len(rows))                     # more programs than EXACT_LINE
    assert _estimated_coverage(wide, 0, 1)[1] < len(wide)
