"""The modeled speedups have the shape the prototype established on H100 SXM."""
import pytest
import torch

import modeled_kernels as kernels
from environment.evaluation.modeled.model import load_spec, model_cost, modeled_speedup
from environment.evaluation.modeled.reference import reference_cost
from modeled_helpers import GELU, GELU_TOLERANCE, count, load_module

SPEC = load_spec()


def speedup(reference, candidate, inputs, tolerance=None):
    ref = reference_cost(reference, inputs, SPEC, tolerance)
    out, report = count(candidate, *inputs)
    return modeled_speedup(ref, model_cost(report["launches"], SPEC, tolerance), SPEC), report


@pytest.fixture(scope="module")
def gelu_inputs():
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(127, 257, generator=gen), torch.randn(257, generator=gen)]


def test_fused_triton_gelu_beats_the_two_op_reference_by_1_5_to_2x(gelu_inputs):
    reference = load_module(GELU / "reference.py").Model()
    fused = load_module(GELU / "solutions" / "correct" / "triton_fused.py").ModelNew()
    value, report = speedup(reference, fused, gelu_inputs, GELU_TOLERANCE)
    assert 1.5 <= value <= 2.0
    assert [r["name"] for r in report["launches"]] == ["gelu_bias_kernel"]


def test_two_op_torch_gelu_models_exactly_as_fast_as_the_reference(gelu_inputs):
    reference = load_module(GELU / "reference.py").Model()
    two_ops = load_module(GELU / "solutions" / "correct" / "torch_two_ops.py").ModelNew()
    value, report = speedup(reference, two_ops, gelu_inputs, GELU_TOLERANCE)
    assert value == 1.0
    assert [r["name"] for r in report["launches"]] == ["aten.add.Tensor", "aten.gelu.default"]


def test_triton_vector_add_models_exactly_as_fast_as_torch_add():
    x, y = torch.randn(1 << 18), torch.randn(1 << 18)
    value, _ = speedup(lambda a, b: a + b, kernels.vector_add, [x, y])
    assert value == 1.0


def test_triton_softmax_models_exactly_as_fast_as_torch_softmax():
    x = torch.randn(64, 1000)
    value, report = speedup(lambda v: torch.softmax(v, dim=-1), kernels.softmax, [x])
    assert value == 1.0
    assert report["launches"][0]["programs"] == 64


def test_naive_small_tile_matmul_models_slower_than_torch_mm():
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    value, report = speedup(torch.mm, kernels.naive_matmul, [a, b])
    assert value < 1.0
    launch = report["launches"][0]
    assert launch["flops"]["dot_ieee"] == 2.0 * 128 ** 3  # input_precision="ieee": the CUDA cores
    assert launch["bytes_sectors"] > 4 * launch["bytes_unique"]  # tiles re-read A and B many times


def test_one_giant_program_is_not_free():
    x, y = torch.randn(1 << 16), torch.randn(1 << 16)
    _, many = count(lambda a, b: kernels.vector_add(a, b, block=1024), x, y)
    _, one = count(lambda a, b: kernels.vector_add(a, b, block=1 << 16), x, y)
    many_cost, one_cost = model_cost(many["launches"], SPEC), model_cost(one["launches"], SPEC)
    assert one_cost.launches[0].bound == "occupancy"
    assert one_cost.time_us > many_cost.time_us


def mm_record(precision):
    return [{"name": "mm", "programs": None, "bytes_unique": 0, "bytes_sectors": 0,
             "flops": {precision: 2.0 * 4096 ** 3}}]


def test_fp32_matmuls_are_charged_as_tf32_only_when_the_tolerance_admits_tf32():
    loose, tight = {"atol": 1e-2, "rtol": 1e-2}, {"atol": 1e-5, "rtol": 1e-5}
    assert model_cost(mm_record("dot_fp32"), SPEC, loose).time_us == model_cost(mm_record("dot_tf32"), SPEC, loose).time_us
    assert model_cost(mm_record("dot_tf32"), SPEC, tight).time_us == model_cost(mm_record("dot_fp32"), SPEC, tight).time_us
    assert model_cost(mm_record("dot_tf32"), SPEC, tight).time_us > 5 * model_cost(mm_record("dot_tf32"), SPEC, loose).time_us


def test_modeled_speedup_is_clamped_to_the_documented_range():
    fast = model_cost(mm_record("dot_fp16"), SPEC)
    slow = model_cost(mm_record("dot_fp32") * 400, SPEC)
    assert modeled_speedup(slow, fast, SPEC) == SPEC["speedup_range"][1] == 10.0
    assert modeled_speedup(fast, slow, SPEC) == SPEC["speedup_range"][0] == 0.05


def test_a_zero_or_non_finite_time_earns_no_speedup_never_the_cap():
    nothing = model_cost([], SPEC)
    slow = model_cost(mm_record("dot_fp32"), SPEC)
    assert nothing.time_us == 0.0 and modeled_speedup(slow, nothing, SPEC) is None
    forged = slow.model_copy(update={"time_us": float("nan")})
    assert modeled_speedup(slow, forged, SPEC) is None and modeled_speedup(forged, slow, SPEC) is None
