"""Trial inputs reach what a GPU run would meet (issue 10): extreme values per task family, hidden
shapes beyond every listed one, a float64 oracle, and the TF32 decision per task."""
from __future__ import annotations

import textwrap

import pytest
import torch

from environment.evaluation.evaluator.compare import compare
from environment.evaluation.evaluator.inputs import hidden_shape, init_args, make_inputs, plan_trials
from environment.evaluation.evaluator.tf32_policy import tf32_admissible
from environment.prompt import task_prompt
from environment.tasks import get_task, list_tasks
from environment.tasks.task import task_from_reference

TASKS = list_tasks()
SEEDS = [11, 22, 33, 44, 55]


def test_a_plan_has_one_hidden_trial_last_and_one_shuffled_trial_and_exercises_every_distribution():
    task = get_task("softmax")
    trials = plan_trials(task, "cpu", SEEDS, hidden=1, shuffled=1)
    assert [t.hidden for t in trials] == [False, False, False, False, True]
    assert [t.order_seed is not None for t in trials] == [False, True, False, False, False]
    assert {t.distribution for t in trials if not t.hidden} == {"normal", "wide", "extreme"}
    assert trials[-1].distribution in ("normal", "wide")  # extreme rows would hide a lost tail
    assert [t.shape for t in trials[:3]] == list(task.cpu_shapes)


def test_without_the_knobs_or_a_hidden_shape_spec_the_plan_is_the_listed_shapes_only():
    assert not any(t.hidden or t.order_seed for t in plan_trials(get_task("softmax"), "cpu", SEEDS))
    plain = task_from_reference(get_task("softmax").reference_path, {})
    assert not any(t.hidden for t in plan_trials(plain, "cpu", SEEDS, hidden=1, shuffled=1))


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_hidden_shapes_are_odd_drawn_from_the_seed_and_beyond_every_listed_and_modeled_size(task):
    assert task.hidden_shape and task.extreme and "extreme" in task.distributions
    shapes = [hidden_shape(task, s) for s in range(40)]
    assert shapes[3] == hidden_shape(task, 3) and len({tuple(s.items()) for s in shapes}) > 1
    listed = list(task.cpu_shapes) + ([task.model_shape] if task.model_shape else [])
    beyond = [d for d, (low, _) in task.hidden_shape.items() if all(low > s[d] for s in listed)]
    assert beyond, f"{task.id}: no hidden dimension exceeds every listed and modeled size"
    for shape in shapes:
        for d, (low, high) in task.hidden_shape.items():
            assert low <= shape[d] <= high and (shape[d] % 2 == 1 or low == high)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_reference_defines_its_output_on_extreme_inputs_and_on_hidden_shapes(task):
    ref = task.load_reference()
    for shape in (task.cpu_shapes[0], hidden_shape(task, 5)):
        inputs = make_inputs(ref, shape, "extreme", 5, task.extreme)
        torch.manual_seed(0)
        with torch.no_grad():
            out = ref.Model(*init_args(ref))(*inputs)
        assert torch.isfinite(out).all(), f"{task.id}: reference not finite on extreme inputs at {shape}"


def test_extreme_logits_overflow_exp_without_the_max_and_masked_rows_keep_a_finite_max():
    ref = get_task("softmax").load_reference()
    (x,) = make_inputs(ref, {"M": 64, "N": 1000}, "extreme", 3, "masked_logits")
    finite = x[torch.isfinite(x)]
    assert finite.abs().max() > 88.7 and torch.isinf(torch.exp(finite)).any()
    assert torch.isneginf(x).any() and torch.isfinite(x.amax(dim=1)).all()


def test_extreme_rows_span_six_decades_sit_far_from_zero_and_include_an_all_zero_row():
    ref = get_task("layernorm").load_reference()
    x, _, _ = make_inputs(ref, {"M": 127, "N": 257}, "extreme", 3, "rows")
    scale = x.abs().amax(dim=1)
    assert (scale == 0).sum() == 1
    assert scale[scale > 0].max() / scale[scale > 0].min() > 1e4
    nonzero = x[scale > 0]
    assert ((nonzero.mean(dim=1).abs() / nonzero.std(dim=1)) > 1.0).float().mean() > 0.5


def test_extreme_attention_scores_pass_exp_overflow():
    ref = get_task("causal_attention").load_reference()
    q, k, _ = make_inputs(ref, {"B": 1, "H": 2, "S": 65, "D": 32}, "extreme", 3, "attention")
    assert ((q @ k.transpose(-2, -1)) / 32 ** 0.5).max() > 88.7


def test_a_candidate_closer_to_the_truth_than_the_fp32_reference_passes_with_the_oracle():
    truth = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)
    reference = (truth + 1e-3).float()      # the fp32 reference is itself off by 1e-3 here
    candidate = truth.float()
    err, _, _ = compare(reference, candidate, 1e-5, 1e-5, 0, "extreme", {})
    assert err is not None  # judged against the fp32 reference alone, the honest kernel fails
    err, max_abs, _ = compare(reference, candidate, 1e-5, 1e-5, 0, "extreme", {}, oracle=truth)
    assert err is None and max_abs < 1e-6


def test_the_oracle_tolerates_only_the_fp32_references_own_error_on_that_row():
    truth = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], dtype=torch.float64)
    reference = truth.float().clone()
    reference[0, 0] += 1e-3                 # row 0: the reference is off by 1e-3; row 1: exact
    candidate = (truth + 3e-3).float()      # beyond 2 x 1e-3 on row 0, beyond the tolerance on row 1
    err, _, mismatch = compare(reference, candidate, 1e-5, 1e-5, 0, "normal", {}, oracle=truth, slack=2.0)
    assert err is not None and mismatch.mismatched == 6
    candidate = truth.float().clone()
    candidate[0, 2] += 1.5e-3               # within 2 x the row's reference error
    assert compare(reference, candidate, 1e-5, 1e-5, 0, "normal", {}, oracle=truth, slack=2.0)[0] is None


def test_a_scale_or_shift_error_under_the_absolute_tolerance_fails_as_a_whole():
    """Outputs small next to atol (a softmax over 3000 classes, ~3e-4 each, atol 1e-4): every element of
    out * 1.01 or out + 2e-5 is within the elementwise tolerance, the output as a whole is not."""
    torch.manual_seed(0)
    x = torch.rand(64, 3000, dtype=torch.float64)
    truth = torch.softmax(x, 1)
    reference = torch.softmax(x.float(), 1)
    for wrong in (reference * 1.01, reference + 2e-5, reference * 0.995):
        err, _, mismatch = compare(reference, wrong, 1e-4, 1e-4, 2, "normal", {"M": 64}, oracle=truth)
        assert err is not None and "as a whole" in err and mismatch.trial == 2 and len(mismatch.indices) == 5
    # an honest fp32 reordering (a float64 softmax rounded, a different summation order) passes
    assert compare(reference, truth.float(), 1e-4, 1e-4, 0, "normal", {})[0] is None
    exp = torch.exp(x.float() - x.float().amax(1, keepdim=True))
    reordered = exp / exp.flip(1).cumsum(1)[:, -1:]
    assert compare(reference, reordered, 1e-4, 1e-4, 0, "normal", {})[0] is None
    # where the fp32 reference is itself off, the oracle still decides: an output closer to the truth passes
    off = (truth * (1 + 3e-4)).float()
    assert compare(off, truth.float(), 1e-4, 1e-4, 0, "normal", {}, oracle=truth)[0] is None


def test_a_scale_error_in_a_half_precision_output_fails_as_a_whole_an_honest_one_passes():
    """KernelBench's half-precision tolerance (1e-2) is near bf16's epsilon (7.8e-3): the rounding allowed on
    top of rtol is one epsilon, so a bf16 softmax 2% or 4% off (every element within atol) fails, while one
    computed in bf16 throughout (about half an epsilon off as a whole) passes."""
    torch.manual_seed(0)
    x = torch.randn(16, 4096)
    for dtype, factors in ((torch.bfloat16, (1.02, 1.04)), (torch.float16, (1.015,))):
        reference = torch.softmax(x, 1).to(dtype)
        for f in factors:
            err = compare(reference, (torch.softmax(x, 1) * f).to(dtype), 1e-2, 1e-2, 0, "normal", {})[0]
            assert err is not None and "as a whole" in err, (dtype, f)
        assert compare(reference, torch.softmax(x.to(dtype), 1), 1e-2, 1e-2, 0, "normal", {})[0] is None, dtype


def test_a_mismatch_on_a_hidden_shape_does_not_name_the_shape():
    err, _, mismatch = compare(torch.zeros(3, 5), torch.ones(3, 5), 1e-5, 1e-5, 4, "normal", {"M": 3, "N": 5},
                               hidden=True)
    assert "a hidden shape" in err and "'N'" not in err and mismatch.shape == {}


def test_the_prompt_shows_only_the_listed_shapes_and_says_hidden_ones_exist():
    task = get_task("rmsnorm")
    prompt = task_prompt(task, "cpu", 5)
    assert "{M=127, N=257}, {M=64, N=1000}, {M=129, N=128}" in prompt
    assert "Hidden trials also use sizes you are not shown" in prompt and "extreme inputs" in prompt
    assert "4097" not in prompt and "8191" not in prompt
    assert "defaults to TF32" in prompt and "any order" in prompt


def test_the_prompt_names_the_sizes_speed_is_priced_at_and_that_the_lower_speedup_counts():
    """A kernel tuned for one size and credited at the other (128x128 tiles: 4 programs at the 256^3 model shape,
    0.689 against 0.884 for the same math picking tiles by size) is the agent's to avoid only if it is told."""
    matmul = task_prompt(get_task("matmul_bias_relu"), "cpu", 5)
    assert "{M=256, K=256, N=256} (every program run) and {M=8191, K=2048, N=3001}" in matmul
    assert "the lower speedup counts" in matmul
    assert "priced at {M=64, C=32000}, every program run." in task_prompt(get_task("cross_entropy"), "cpu", 5)
    assert "priced at" not in task_prompt(get_task("matmul_bias_relu"), "cuda", 5)


def test_tf32_is_judged_per_task_by_running_the_reference_with_tf32_operands(tmp_path):
    assert tf32_admissible(get_task("matmul_bias_relu")) is False
    assert tf32_admissible(get_task("causal_attention")) is False
    assert tf32_admissible(get_task("gelu_bias")) is None  # no matmul in the reference
    src = tmp_path / "small_matmul.py"
    src.write_text(textwrap.dedent("""
        import torch
        M, K, N = 16, 8, 16

        class Model(torch.nn.Module):
            def forward(self, a, b):
                return a @ b

        def get_inputs():
            return [torch.randn(M, K), torch.randn(K, N)]

        def get_init_inputs():
            return []
    """))
    loose = task_from_reference(src, {"id": "loose_mm", "tolerance": {"atol": 0.5, "rtol": 0.05}})
    tight = task_from_reference(src, {"id": "tight_mm", "tolerance": {"atol": 1e-5, "rtol": 1e-5}})
    assert tf32_admissible(loose) is True and tf32_admissible(tight) is False


def test_the_judges_closeness_is_torch_isclose_with_nan_inf_overflow_and_zero_tolerances():
    """The judge computes isclose from the |a - e| it already holds (compare._isclose): it must equal
    torch.isclose(equal_nan=True) wherever it is used, NaN and infinities on either side, float64 differences that
    overflow, and tolerances of zero included."""
    from environment.evaluation.evaluator.compare import _isclose
    g = torch.Generator().manual_seed(0)
    e = torch.randn(6, 50, generator=g, dtype=torch.float64)
    a = e + torch.randn(6, 50, generator=g, dtype=torch.float64) * torch.logspace(-9, 0, 50, dtype=torch.float64)
    a[0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e308])
    e[0, :4] = torch.tensor([float("nan"), float("inf"), float("inf"), -1e308])
    e[1, 0], a[1, 0] = float("nan"), 0.0
    diff = (a - e).abs()
    for rtol, atol in ((1e-4, 1e-4), (0.0, 1e-5), (1e-3, 0.0), (0.0, 0.0)):
        expected = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        assert torch.equal(_isclose(a, e, diff, False, rtol, atol), expected), (rtol, atol)
        finite_rows = slice(2, None)   # no NaN or infinity there: the shortcut for an all-finite difference
        assert torch.equal(_isclose(a[finite_rows], e[finite_rows], diff[finite_rows], True, rtol, atol),
                           expected[finite_rows]), (rtol, atol)
