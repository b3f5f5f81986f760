"""Fidelity pairs (issue 17): correct kernels whose order on an H100 at the task's GPU shape is not in
doubt, through the real harness (trace at the GPU shape, sampled trusted replay, roofline). Each pair
pins the direction and a minimum ratio of modeled candidate times, and of the credited speedups."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from environment.config import harness_config
from environment.feedback import render
from environment.tasks import get_task
from tests.support.evaluated import evaluated

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(__import__("environment.config", fromlist=["x"]).detect_backend() != "cpu",
                                 reason="modeled speed is the CPU-host signal")]
HERE = Path(__file__).parent / "fidelity"


def _shipped(task_id: str, prefix: str) -> str:
    task = get_task(task_id)
    return next(p for p in task.solutions["correct"] if p.name.startswith(prefix)).read_text()


def _priced(task_id: str, source: str):
    """The evaluation every test here reads, once per run for each source (the shipped fused GELU is the good
    kernel of three pairs and of both register tests). A generous budget: a grid of a few huge programs
    interprets for long on a loaded 2-core host, and this file is about prices, not about how long the
    interpreter takes."""
    config = dataclasses.replace(harness_config(), gpu_shape_pricing=True, timeout_s=60.0,
                                 total_timeout_s=600.0)
    return evaluated(get_task(task_id), source, config, seed=3)


def _time_us(task_id: str, source: str):
    result = _priced(task_id, source)
    p = result.performance
    assert result.correct and p is not None and p.speedup_kind == "modeled", (result.flags, p and p.note)
    cost = p.modeled_candidate
    assert cost.shape and cost.shape != get_task(task_id).model_shape, p.note   # priced at a GPU shape
    assert cost.shape in [dict(s) for s in get_task(task_id).gpu_shapes]
    return cost.time_us, cost, p.speedup


PAIRS = [
    # (task, good, worse, minimum ratio worse/good, the bound that makes the worse one slow)
    ("gelu_bias", "shipped:triton_fused", "gelu_column_walk.py", 2.0, "l2"),
    ("matmul_bias_relu", "shipped:triton_tiled", "matmul_row_per_program.py", 5.0, "l2"),
    ("gelu_bias", "shipped:triton_fused", "gelu_unfused.py", 1.5, "memory"),
    ("rmsnorm", "shipped:triton_fused", "rmsnorm_two_passes.py", 1.3, "memory"),
    ("gelu_bias", "shipped:triton_fused", "gelu_eight_programs.py", 2.0, "occupancy"),
]


@pytest.mark.parametrize("task_id,good,worse,ratio,bound", PAIRS, ids=[p[2] for p in PAIRS])
def test_the_worse_kernel_is_modeled_slower_by_at_least_the_pinned_ratio(task_id, good, worse, ratio, bound):
    good_src = _shipped(task_id, good.split(":", 1)[1]) if good.startswith("shipped:") else (HERE / good).read_text()
    good_us, good_cost, good_speedup = _time_us(task_id, good_src)
    worse_us, worse_cost, worse_speedup = _time_us(task_id, (HERE / worse).read_text())
    assert worse_us >= ratio * good_us, (worse_us, good_us)
    # what the reward uses (the lower of the model-shape and GPU-shape speedups) keeps the ratio
    assert good_speedup >= ratio * worse_speedup, (good_speedup, worse_speedup)
    assert worse_cost.peak_fraction < good_cost.peak_fraction
    assert bound in {launch.bound for launch in worse_cost.launches}
    assert all(launch.sampled_programs for launch in worse_cost.launches)   # a sample, scaled to the grid


def _gelu_tiles(block: int) -> str:
    """The shipped fused GELU (4 warps, 1024-element tiles) with larger tiles: the same work."""
    source = _shipped("gelu_bias", "triton_fused")
    assert "BLOCK = 1024\n" in source
    return source.replace("BLOCK = 1024\n", f"BLOCK = {block}\n")


def test_spilled_registers_are_priced_as_local_memory_traffic():
    """16384-element tiles: 128 values of each tensor per thread, more than 255 registers hold, so the
    sm_90 compile spills (hundreds of bytes per thread) and the spill stores and reloads go through
    L2. On an H100 the spilling kernel is the slower one."""
    good_us, good, _ = _time_us("gelu_bias", _gelu_tiles(1024))
    worse_us, worse, _ = _time_us("gelu_bias", _gelu_tiles(16384))
    assert worse_us >= 1.2 * good_us, (worse_us, good_us)
    assert all(launch.spill_bytes > 0 for launch in worse.launches)
    assert all(launch.spill_bytes == 0 for launch in good.launches)
    assert worse.peak_fraction < good.peak_fraction
    result = _priced("gelu_bias", _gelu_tiles(16384))   # the evaluation _time_us read above
    compiled = result.performance.compile
    assert compiled and all(info.ok and info.spills and info.registers == 255 for info in compiled), compiled
    assert "MB of spilled registers" in render(result, 0.0, {})   # the feedback says why


def test_registers_limit_the_programs_resident_per_sm():
    """31 registers per thread (1024-element tiles): 16 programs of 4 warps per SM (the 64-warp limit).
    8192-element tiles: 156-189 registers, up to 6144 per warp of the 64K per SM, so 2 programs. The
    wider kernel is never modeled faster for it (here both are DRAM-bound: 8 warps still hide the
    latency)."""
    good_us, good, _ = _time_us("gelu_bias", _gelu_tiles(1024))
    worse_us, worse, _ = _time_us("gelu_bias", _gelu_tiles(8192))
    assert [launch.resident_programs for launch in good.launches] == [16]
    assert [launch.resident_programs for launch in worse.launches] == [2]
    assert all(launch.spill_bytes == 0 for launch in worse.launches)
    assert worse_us >= good_us
