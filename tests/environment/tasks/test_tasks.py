"""Every task validates itself through the real harness: its reference and shipped correct solutions
pass, its wrong solutions fail, and its output is not degenerate. Plus the KernelBench loader."""
from __future__ import annotations

import textwrap

import pytest
import torch

from environment.evaluation import flags as F
from environment.config import harness_config
from environment.evaluation.harness import evaluate
from environment.evaluation.evaluator.inputs import make_inputs
from environment.prompt import starting_template
from environment.tasks import GRADED_TASKS, TaskError, list_tasks, load_kernelbench, registry
from tests.support.evaluated import evaluated

TASKS = list_tasks()
SOLUTIONS = [(t.id, kind, p) for t in TASKS for kind in ("correct", "wrong") for p in t.solutions.get(kind, ())]


def test_the_library_has_the_graded_tasks_and_at_least_nine_more_across_levels():
    ids = [t.id for t in TASKS]
    assert ids[:3] == list(GRADED_TASKS)
    assert len(ids) >= 12
    assert {t.difficulty for t in TASKS if not t.graded} == {"easy", "medium", "hard"}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_each_task_ships_triton_and_pytorch_solutions_and_wrong_ones(task):
    correct = [p.name for p in task.solutions.get("correct", ())]
    assert any(n.startswith("triton") for n in correct) and any(n.startswith("torch") for n in correct)
    assert task.solutions.get("wrong")
    assert task.cpu_shapes and task.gpu_shapes and task.description.strip()
    for path in task.solutions["correct"] + task.solutions["wrong"]:
        assert path.read_text().lstrip().startswith('"""'), f"{path} needs a one-line docstring"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_reference_passes_the_harness(task):
    # the starting template is the reference as a submission: its evaluation is shared with test_winnable and
    # test_reference_as_submission
    result = evaluated(task, starting_template(task), seed=0)
    assert result.correct, result.correctness and result.correctness.error
    assert not any(F.is_hack(f) for f in result.flags)


# Pipelines whose later launch reads what another tiling wrote (an fc2 tile reads a whole row of fc1 tiles): the
# sampled replay's dependency closure runs those producer programs, so they are priced at the GPU shape too
# (docs/honest_styles.md), neither capped nor unreplayable
GPU_SHAPE_PIPELINES = {"triton_fused_epilogues.py", "triton_fused_tf32x3.py"}


@pytest.mark.parametrize("task_id,kind,path", SOLUTIONS, ids=lambda v: getattr(v, "name", v))
def test_shipped_solutions_get_their_verdict(task_id, kind, path):
    result = evaluated(registry()[task_id], path.read_text(), seed=0)   # shared with test_winnable and the red team
    hacks = [f for f in result.flags if F.is_hack(f)]
    if kind == "correct":
        assert result.correct and not hacks, (result.flags, result.correctness and result.correctness.error,
                                              result.load and result.load.error, result.log[-2000:])
        if path.name.startswith("triton"):
            assert result.launches.triton_launches >= 1
        if result.backend == "cpu" and path.name in GPU_SHAPE_PIPELINES and harness_config().gpu_shape_pricing:
            perf = result.performance
            assert perf.gpu_shape_speedup is not None and "a limit of the model" not in perf.note, perf.note
            assert perf.speedup is not None and not {F.UNREPLAYABLE, F.SIZE_DEPENDENT} & set(result.flags)
        elif result.backend == "cpu":  # every honest solution keeps its modeled credit (trusted replay)
            assert result.performance.speedup is not None, result.performance.note
            assert not {F.UNREPLAYABLE, F.INVALID_COST, F.MODELED_UNAVAILABLE} & set(result.flags), result.flags
    else:
        assert not result.correct


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_no_task_output_is_constant_or_independent_of_an_input(task):
    ref = task.load_reference()
    for shape in task.cpu_shapes:
        inputs = make_inputs(ref, shape, "normal", 123)  # sets the dimensions get_init_inputs may read
        torch.manual_seed(0)
        model = ref.Model(*ref.get_init_inputs())
        with torch.no_grad():
            base = model(*inputs)
            if base.numel() > 1:
                assert float(base.float().std()) > 0, f"{task.id}: constant output for {shape}"
            other = model(*make_inputs(ref, shape, "normal", 456))
            assert not torch.allclose(other, base), f"{task.id}: output does not depend on the seed ({shape})"
            for i, x in enumerate(inputs):
                if not x.is_floating_point():
                    continue
                changed = list(inputs)
                changed[i] = x + torch.randn_like(x)
                assert not torch.allclose(model(*changed), base), f"{task.id}: output ignores input {i}"


def test_a_users_kernelbench_file_becomes_a_task(tmp_path):
    src = tmp_path / "19_ReLU.py"
    src.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        batch_size = 16
        dim = 129

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                return torch.relu(x)

        def get_inputs():
            return [torch.randn(batch_size, dim)]

        def get_init_inputs():
            return []
    """))
    (task,) = load_kernelbench(src)
    assert task.id == "19_ReLU" and task.cpu_shapes == ({},)
    good = evaluate(task, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                          "        return x.clamp_min(0)\n")
    bad = evaluate(task, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                         "        return x.abs()\n")
    assert good.correct and not bad.correct


def test_a_file_without_get_inputs_is_refused_with_the_fix(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(TaskError, match="missing get_inputs; a KernelBench file defines Model, get_inputs and "
                                        "get_init_inputs"):
        load_kernelbench(src)
