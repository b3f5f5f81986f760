"""Fidelity pairs (issue 17): correct kernels whose order on an H100 at the task's GPU shape is not in
doubt, through the real harness (trace at the GPU shape, sampled trusted replay, roofline). Each pair
pins the direction and a minimum ratio of modeled candidate times, and of the credited speedups."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from environment.config import harness_config
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(__import__("environment.config", fromlist=["x"]).detect_backend() != "cpu",
                                 reason="modeled speed is the CPU-host signal")]
HERE = Path(__file__).parent / "fidelity"


def _shipped(task_id: str, prefix: str) -> str:
    task = get_task(task_id)
    return next(p for p in task.solutions["correct"] if p.name.startswith(prefix)).read_text()


def _time_us(task_id: str, source: str):
    # a generous budget: a grid of a few huge programs interprets for long on a loaded 2-core host, and
    # this test is about prices, not about how long the interpreter takes
    config = dataclasses.replace(harness_config(), gpu_shape_pricing=True, timeout_s=60.0,
                                 total_timeout_s=600.0)
    result = evaluate(get_task(task_id), source, config, seed=3)
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
