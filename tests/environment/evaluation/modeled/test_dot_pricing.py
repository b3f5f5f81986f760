"""tl.dot is charged at the sm_90 rate of what it runs (gpus.yaml `peak`) times its passes: ieee at the fp32
FMA rate, tf32 at the TF32 tensor-core rate, tf32x3 three TF32 passes, bf16 operands the BF16 rate and a bf16x3
split three of those. Counted on real kernels at one shape, priced by the model."""
import pytest
import torch
import triton
import triton.language as tl

from environment.evaluation.modeled.model import _compute_s, load_spec
from environment.evaluation.modeled.precision import tf32_admitted
from modeled_helpers import count

SPEC = load_spec()
ADMITS_TF32 = {"atol": 1e-2, "rtol": 1e-2, "tf32_admissible": True}
REFUSES_TF32 = {"atol": 1e-3, "rtol": 1e-3, "tf32_admissible": False}  # matmul_bias_relu's contract
N = 128


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, N: tl.constexpr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, N, BLOCK):
        a = tl.load(a_ptr + rm[:, None] * N + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        if MODE == "ieee":
            acc += tl.dot(a, b, input_precision="ieee")
        elif MODE == "tf32":
            acc += tl.dot(a, b)
        elif MODE == "tf32x3":
            acc += tl.dot(a, b, input_precision="tf32x3")
        elif MODE == "bf16":
            acc += tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))
        else:  # bf16x3: hi*hi + lo*hi + hi*lo
            a_hi, b_hi = a.to(tl.bfloat16), b.to(tl.bfloat16)
            a_lo, b_lo = (a - a_hi.to(tl.float32)).to(tl.bfloat16), (b - b_hi.to(tl.float32)).to(tl.bfloat16)
            acc += tl.dot(a_hi, b_hi) + tl.dot(a_lo, b_hi) + tl.dot(a_hi, b_lo)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _compute_us(mode: str, tolerance: dict) -> float:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(N, N, generator=gen), torch.randn(N, N, generator=gen)
    c = torch.empty(N, N)
    _, report = count(lambda x, y: _matmul[(N // 32, N // 32)](x, y, c, N=N, BLOCK=32, MODE=mode), a, b)
    (launch,) = report["launches"]
    dots = {k: v for k, v in launch["flops"].items() if k.startswith("dot")}  # the split's casts are elementwise
    return _compute_s(dots, SPEC, tf32_admitted(tolerance)) * 1e6


@pytest.fixture(scope="module")
def costs():
    modes = ("ieee", "tf32", "tf32x3", "bf16", "bf16x3")
    return {(m, name): _compute_us(m, tol) for m in modes
            for name, tol in (("admits", ADMITS_TF32), ("refuses", REFUSES_TF32))}


def test_each_precision_is_charged_its_tensor_core_rate_times_its_passes(costs):
    flops = 2.0 * N ** 3
    peak = SPEC["peak"]
    for tolerance in ("admits", "refuses"):
        assert costs["ieee", tolerance] == pytest.approx(flops / peak["dot_fp32"] * 1e6)
        assert costs["tf32x3", tolerance] == pytest.approx(3 * flops / peak["dot_tf32"] * 1e6)
        assert costs["bf16", tolerance] == pytest.approx(flops / peak["dot_bf16"] * 1e6)
        assert costs["bf16x3", tolerance] == pytest.approx(3 * flops / peak["dot_bf16"] * 1e6)
    assert costs["tf32", "admits"] == pytest.approx(flops / peak["dot_tf32"] * 1e6)


def test_ieee_costs_more_than_tf32x3_which_costs_more_than_tf32(costs):
    assert costs["ieee", "admits"] > costs["tf32x3", "admits"] > costs["tf32", "admits"]
    assert costs["ieee", "refuses"] > costs["tf32x3", "refuses"]  # the fp32-accurate split beats the CUDA cores
    assert costs["bf16x3", "admits"] > costs["bf16", "admits"]


def test_one_tf32_pass_is_charged_as_ieee_where_the_contract_refuses_tf32(costs):
    """Its error grows with K at the GPU shape, beyond what the small-shape checks saw: no tensor-core credit."""
    assert costs["tf32", "refuses"] == pytest.approx(costs["ieee", "refuses"])
