"""Issue 6 through the real harness on a CPU host: modeled speedups rank submissions, are
bit-identical across runs and processes, and every gate stops a real attacking submission."""
from __future__ import annotations

import pytest

from environment import reward
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.evaluation.transport.pool import EvaluatorPool
from environment.tasks import get_task
from tests.support.evaluated import evaluated

pytestmark = pytest.mark.skipif(__import__("environment.config", fromlist=["x"]).detect_backend() != "cpu",
                                reason="modeled speed is the CPU-host signal")
GELU = get_task("gelu_bias")
FUSED = next(p for p in GELU.solutions["correct"] if p.name == "triton_fused.py").read_text()
TWO_OPS = next(p for p in GELU.solutions["correct"] if p.name.startswith("torch")).read_text()
WRONG = (GELU.folder / "solutions/wrong/tanh_approx.py").read_text()


def test_fused_triton_scores_above_two_op_pytorch_which_scores_above_wrong():
    fused, two, wrong = (evaluate(GELU, src, seed=5) for src in (FUSED, TWO_OPS, WRONG))
    assert fused.performance.speedup_kind == "modeled" and 1.5 <= fused.performance.speedup <= 2.1
    assert two.performance.speedup == pytest.approx(1.0)
    assert reward.score(fused)[0] > reward.score(two)[0] > reward.score(wrong)[0]
    assert fused.performance.compile and fused.performance.compile[0].ok
    assert fused.performance.compile[0].registers > 0


def test_modeled_speedup_is_bit_identical_across_runs_and_processes():
    # seed 1 under the default settings is also the priced run of the floor test below: one evaluation per run
    first = [evaluated(GELU, FUSED, seed=s).performance.speedup for s in (1, 2)]
    other_pool = EvaluatorPool(1)  # a fresh zygote process
    try:
        response = other_pool.run(_request(FUSED, seed=9), "determinism", 120)
    finally:
        other_pool.close()
    third = response.result.performance.speedup
    assert first[0] == first[1] == third


def _request(source: str, seed: int):
    from environment.config import harness_config
    from environment.evaluation import harness
    from environment.evaluation.evaluator.inputs import seed_plan
    from environment.evaluation.static.checks import check_source
    from environment.evaluation.transport.request import EvalRequest
    config = harness_config()
    return EvalRequest.of(GELU, source, seed_plan(b"another-secret", seed, GELU.id, "", config.trials), config,
                          check_source(source, GELU.reference_code), harness.backend())


HOST_NUMPY = '''"""Computes the output on the host with numpy and returns it as a tensor."""
import math
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, bias):
        v = x.numpy() + bias.numpy()
        erf = np.vectorize(math.erf)
        return torch.from_numpy((0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))).astype(np.float32))
'''

RACY = '''"""A running row sum where each program reads the row the previous program wrote: racy on a GPU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_rows(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.load(out_ptr + tl.maximum(row - 1, 0) * N + offs, mask=offs < N, other=0.0)
    v = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr + row * N + offs, acc + v, mask=offs < N)


@triton.jit
def gelu_bias(x_ptr, b_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) + tl.load(b_ptr + offs % N, mask=m)
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=m)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        M, N = x.shape
        scratch = torch.zeros(M * N, device=x.device)
        add_rows[(M,)](x, scratch, N, BLOCK=triton.next_power_of_2(N))
        out = torch.empty_like(x)
        gelu_bias[(triton.cdiv(M * N, 1024),)](x, bias, out, M * N, N, BLOCK=1024)
        return out
'''


def test_an_output_computed_with_host_numpy_gets_no_modeled_credit():
    r = evaluate(GELU, HOST_NUMPY, seed=3)
    assert r.correct and F.UNTRACED_WORK in r.flags and reward.score(r)[0] == 0.0


def test_a_cross_program_race_is_flagged_and_earns_no_speed_credit():
    r = evaluate(GELU, RACY, seed=3)
    assert r.correct and F.CROSS_PROGRAM_RACE in r.flags
    assert r.performance.speedup is None and reward.score(r)[1]["speed"] == 0.0


def test_gpu_shape_pricing_can_be_switched_off_for_throughput():
    """KERNEL_ENV_GPU_SHAPE_PRICING=0: the model-shape price (issue 9's), counted at the model shape; on
    (the default) the same kernel is priced at the task's GPU shape."""
    import dataclasses

    from environment.config import harness_config
    from environment.evaluation.harness import evaluate
    from environment.tasks import get_task

    task = get_task("gelu_bias")
    source = next(p for p in task.solutions["correct"] if p.stem == "triton_fused").read_text()
    shapes = {}
    for on in (True, False):
        result = evaluate(task, source, dataclasses.replace(harness_config(), gpu_shape_pricing=on), seed=1)
        assert result.correct and result.performance.speedup_kind == "modeled"
        shapes[on] = result.performance.modeled_candidate.shape
    gpu = [dict(s) for s in task.gpu_shapes]
    assert shapes[True] in gpu and shapes[False] and shapes[False] not in gpu


def test_a_pytorch_solution_whose_output_an_aten_op_writes_whole_is_priced_at_the_gpu_shape():
    """The output coverage of an aten-written GPU-shape output (8191 x 3001 here) is counted with one flag per
    element: counting it through sorted index arrays ran the replayer out of memory, which capped an honest
    PyTorch solution at 1.0x (and would have cost a Triton one its speed credit)."""
    import dataclasses

    from environment.config import harness_config

    task = get_task("matmul_bias_relu")
    source = next(p for p in task.solutions["correct"] if p.stem == "torch_addmm").read_text()
    result = evaluate(task, source, dataclasses.replace(harness_config(), gpu_shape_pricing=True), seed=1)
    p = result.performance
    assert result.correct and p.gpu_shape_speedup is not None, p.note
    assert p.speedup == min(p.model_shape_speedup, p.gpu_shape_speedup)


def test_a_kernel_storing_into_a_zeroed_output_keeps_its_gpu_shape_price():
    """An output started with torch.zeros_like (a split-K or atomic-add kernel needs one) holds the fill's zeros
    wherever the programs the sample did not run were to store: those are no wrong answer (they were compared, and
    the honest kernel got size_dependent), and no coverage (the kernel's own stores must cover the output)."""
    import dataclasses

    from environment.config import harness_config

    source = FUSED.replace("out = torch.empty_like(x)", "out = torch.zeros_like(x)")
    assert source != FUSED
    result = evaluate(GELU, source, dataclasses.replace(harness_config(), gpu_shape_pricing=True), seed=1)
    p = result.performance
    assert result.correct and not result.flags and p.gpu_shape_speedup is not None, (result.flags, p.note)
    assert p.modeled_candidate.shape in [dict(s) for s in GELU.gpu_shapes]
    assert p.speedup == min(p.model_shape_speedup, p.gpu_shape_speedup) > 0


def test_a_split_kernel_adding_atomically_into_a_zeroed_output_keeps_its_gpu_shape_price():
    """Two programs per block each add half of the result atomically: where only the sample ran the elements
    held half sums (size_dependent). Each sampled block is completed along the grid's short axis."""
    import dataclasses

    from environment.config import harness_config

    source = (FUSED.replace("out = torch.empty_like(x)", "out = torch.zeros_like(x)")
              .replace("grid = (triton.cdiv(n, BLOCK),)", "grid = (triton.cdiv(n, BLOCK), 2)")
              .replace("tl.store(out_ptr + offs, y, mask=mask)", "tl.atomic_add(out_ptr + offs, y * 0.5, mask=mask)"))
    assert source.count("atomic_add") == 1 and "BLOCK), 2)" in source and "zeros_like" in source
    result = evaluate(GELU, source, dataclasses.replace(harness_config(), gpu_shape_pricing=True), seed=1)
    p = result.performance
    assert result.correct and not result.flags and p.gpu_shape_speedup is not None, (result.flags, p.note)
    assert p.speedup == min(p.model_shape_speedup, p.gpu_shape_speedup) > 0


def test_a_kernel_at_the_reward_floor_is_not_priced_at_the_gpu_shape_and_scores_the_same():
    """The credit is the lower of the two prices and the reward pays no speed at or below its floor, so a
    kernel whose model-shape speedup is already there (the shipped flash attention with its bf16 tiles
    widened to fp32 for IEEE dots on the CUDA cores, launched eight times over) keeps a speed reward of 0
    whatever the GPU shape says: its GPU-shape price is not waited for. A kernel above the floor still is
    priced there."""
    import dataclasses

    from environment.config import harness_config

    on = dataclasses.replace(harness_config(), gpu_shape_pricing=True)
    task = get_task("causal_attention")
    shipped = next(p for p in task.solutions["correct"] if p.stem == "triton_flash").read_text()
    flash = (shipped.replace("tl.dot(q, tl.trans(k))", 'tl.dot(q.to(tl.float32), tl.trans(k).to(tl.float32), '
                                                       'input_precision="ieee")')
             .replace("tl.dot(p.to(v.dtype), v)", 'tl.dot(p, v.to(tl.float32), input_precision="ieee")')
             .replace("        flash_causal_kernel[grid](", "        for _ in range(8):\n            flash_causal_kernel[grid]("))
    assert flash.count('input_precision="ieee"') == 2 and "range(8)" in flash
    result = evaluate(task, flash, on, seed=1)
    p = result.performance
    assert result.correct and p.speedup is not None and p.speedup <= reward.SPEEDUP_FLOOR, p.note
    assert p.gpu_shape_speedup is None and "Not priced at the GPU shape" in p.note and "floor" in p.note
    assert p.modeled_candidate.shape not in [dict(s) for s in task.gpu_shapes]
    off = evaluate(task, flash, dataclasses.replace(on, gpu_shape_pricing=False), seed=1)
    assert reward.score(result) == reward.score(off)
    priced = evaluated(GELU, FUSED, on, seed=1).performance   # `on` is the default: shared with the test above
    assert priced.gpu_shape_speedup is not None and priced.speedup > reward.SPEEDUP_FLOOR
