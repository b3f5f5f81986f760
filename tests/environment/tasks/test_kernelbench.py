"""KernelBench problems as tasks: sizes scaled at load, KernelBench's semantics in the harness,
failures listed with their reasons, other kernel languages told apart. Real files, the real
harness (zygote, sandboxed children)."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from environment.config import harness_config
from environment.evaluation.harness import evaluate
from environment.tasks.kernelbench import Unavailable, load_problem, load_suite, reference_as_submission as as_model_new
from environment.tasks.registry import catalog, get_task, scan


def _write(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


BIG_LINEAR = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        \"\"\"A Linear layer, a bias of a derived shape, then ReLU.\"\"\"
        def __init__(self, in_features, out_features, bias_shape):
            super(Model, self).__init__()
            self.fc = nn.Linear(in_features, out_features)
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            return torch.relu(self.fc(x) + self.bias)

    batch_size = 4096
    in_features = 8192
    out_features = 8192
    bias_shape = (out_features,)

    def get_inputs():
        return [torch.randn(batch_size, in_features)]

    def get_init_inputs():
        return [in_features, out_features, bias_shape]
"""


def test_a_large_problem_is_scaled_and_keeps_its_gpu_sizes(tmp_path):
    path = _write(tmp_path / "level2", "12_Gemm_Bias_ReLU_.py", BIG_LINEAR)
    task = load_problem(path)
    assert not isinstance(task, Unavailable), task
    assert task.id == "kernelbench/level2/12_Gemm_Bias_ReLU" and task.title == "Gemm Bias ReLU"
    assert task.difficulty == "medium" and task.train_mode and task.atol == task.rtol == 1e-4
    assert task.gpu_shapes == ({"batch_size": 4096, "in_features": 8192, "out_features": 8192},)
    cpu = task.cpu_shapes[0]
    assert cpu["in_features"] < 8192 and cpu["out_features"] < 8192 and cpu["in_features"] % 2 == 1
    assert "Linear" in task.description and "in_features=8192" in task.description
    # the derived global follows the sizes the harness sets
    module = task.load_reference()
    module.out_features = 37
    assert module.bias_shape == (37,)


def test_a_scaled_problem_plays_reference_right_and_a_wrong_variant_wrong(tmp_path):
    task = load_problem(_write(tmp_path / "level2", "12_Gemm_Bias_ReLU.py", BIG_LINEAR))
    right = evaluate(task, as_model_new(task.reference_code), seed=1)
    wrong = evaluate(task, as_model_new(task.reference_code, wrong=True), seed=1)
    assert right.outcome == "ok" and right.correct, (right.harness_error, right.correctness)
    assert wrong.outcome == "ok" and not wrong.correct and wrong.correctness.trials_passed == 0


SOFTMAX = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super(Model, self).__init__()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.softmax(x, dim=1)

    batch_size = 4096
    dim = 393216

    def get_inputs():
        return [torch.rand(batch_size, dim)]

    def get_init_inputs():
        return []
"""


@pytest.mark.parametrize("change", ["[o * 1.01 for o in outs]", "[o + 2e-5 for o in outs]"])
def test_a_scale_or_shift_error_under_kernelbench_atol_fails_every_trial(tmp_path, change):
    """KernelBench's 23_Softmax (outputs ~1e-4 and less, atol = rtol = 1e-4): each element of the output
    times 1.01, or plus 2e-5, is within the elementwise tolerance; the output as a whole is not. It passed
    5/5 trials (0.625) before the relative error norm joined the criterion."""
    task = load_problem(_write(tmp_path / "level1", "23_Softmax.py", SOFTMAX))
    honest = as_model_new(task.reference_code)
    wrong = evaluate(task, honest.replace("outs = outs", f"outs = {change}"), seed=0)
    assert wrong.outcome == "ok" and not wrong.correct and wrong.correctness.trials_passed == 0
    assert "as a whole" in wrong.correctness.error


BATCHNORM = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, features):
            super(Model, self).__init__()
            self.bn = nn.BatchNorm1d(features)

        def forward(self, x):
            return self.bn(x) * 2.0

    batch_size = 33
    features = 17

    def get_inputs():
        return [torch.randn(batch_size, features) * 3 + 1]

    def get_init_inputs():
        return [features]
"""


def test_models_run_in_training_mode_as_kernelbench_runs_them(tmp_path):
    task = load_problem(_write(tmp_path / "level1", "33_BatchNorm.py", BATCHNORM))
    batch_stats = """
        import torch
        import torch.nn as nn

        class ModelNew(nn.Module):
            def __init__(self, features):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(features))
                self.bias = nn.Parameter(torch.zeros(features))

            def forward(self, x):
                mean = x.mean(0)
                var = x.var(0, unbiased=False)
                return ((x - mean) / torch.sqrt(var + 1e-5) * self.weight + self.bias) * 2.0
    """
    dropped = """
        import torch
        import torch.nn as nn

        class ModelNew(nn.Module):
            def __init__(self, features):
                super().__init__()

            def forward(self, x):
                return x * 2.0
    """
    good = evaluate(task, textwrap.dedent(batch_stats), seed=3)
    bad = evaluate(task, textwrap.dedent(dropped), seed=3)
    assert good.correct, good.correctness
    assert not bad.correct


def test_a_failing_file_is_listed_with_its_reason_and_the_rest_still_load(tmp_path, monkeypatch):
    level = tmp_path / "kb" / "level1"
    _write(level, "1_Broken_import.py", "import no_such_module_here\n")
    _write(level, "2_Relu_with_cuda_inputs.py", """
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x)

        N = 65

        def get_inputs():
            return [torch.randn(N, N).cuda() + torch.ones(N, device="cuda").to("cuda:0")]

        def get_init_inputs():
            return []
    """)
    _write(level, "3_Model_on_cuda.py", """
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return x + torch.ones(x.shape, device="cuda")

        def get_inputs():
            return [torch.randn(8, 8)]

        def get_init_inputs():
            return []
    """)
    _write(level, "4_Dropout.py", """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = torch.nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(x)

        def get_inputs():
            return [torch.randn(64, 64)]

        def get_init_inputs():
            return []
    """)
    items = {item.id: item for item in load_suite(tmp_path / "kb")}
    broken = items["kernelbench/level1/1_Broken_import"]
    assert isinstance(broken, Unavailable) and "No module named 'no_such_module_here'" in broken.reason
    on_cuda = items["kernelbench/level1/3_Model_on_cuda"]
    assert isinstance(on_cuda, Unavailable) and "this host has no GPU" in on_cuda.reason and "line 6" in on_cuda.reason
    dropout = items["kernelbench/level1/4_Dropout"]
    assert isinstance(dropout, Unavailable) and "changes from run to run" in dropout.reason
    cuda_inputs = items["kernelbench/level1/2_Relu_with_cuda_inputs"]
    assert not isinstance(cuda_inputs, Unavailable), cuda_inputs
    assert all(t.device.type == "cpu" for t in cuda_inputs.load_reference().get_inputs())

    monkeypatch.setenv("KERNEL_ENV_EXTRA_TASKS", str(tmp_path / "kb"))
    catalog.cache_clear()
    try:
        tasks, missing = catalog()
        assert "gelu_bias" in tasks and cuda_inputs.id in tasks
        assert {u.id for u in missing} == {broken.id, on_cuda.id, dropout.id}
        with pytest.raises(KeyError, match="is unavailable: importing it failed"):
            get_task(broken.id)
        relu = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n"
        assert evaluate(get_task(cuda_inputs.id), relu, seed=2).correct
        from ui.common import task_choices  # the playground's list: marked, with the reason
        labels = dict((v, k) for k, v in task_choices())
        assert labels[broken.id].startswith("⊘") and "unavailable: importing it failed" in labels[broken.id]
        assert "gen/matmul_epilogue/3/0" in labels and labels["gelu_bias"].startswith("gelu_bias — ")
    finally:
        catalog.cache_clear()


def test_a_missing_extra_path_is_listed_not_raised(tmp_path):
    (item,) = scan(tmp_path / "nowhere")
    assert isinstance(item, Unavailable) and "KERNEL_ENV_EXTRA_TASKS" in item.reason


def test_an_unscalable_problem_is_refused_with_the_reason(tmp_path):
    path = _write(tmp_path / "level1", "9_Fixed_huge.py", """
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return x * 2

        def get_inputs():
            return [torch.randn(8192, 8192)]

        def get_init_inputs():
            return []
    """)
    item = load_problem(path)
    assert isinstance(item, Unavailable) and "cannot be scaled to this host" in item.reason
    assert "512.0 MiB" in item.reason and "write sizes as globals" in item.reason


LOAD_INLINE = '''
import torch
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=source,
                  functions=["relu"], verbose=False)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
'''

RELU = """
    import torch

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    batch_size = 16
    dim = 16384

    def get_inputs():
        return [torch.randn(batch_size, dim)]

    def get_init_inputs():
        return []
"""


def test_cuda_cpp_on_a_cpu_host_is_told_apart_and_earns_nothing(tmp_path):
    task = load_problem(_write(tmp_path / "level1", "19_ReLU.py", RELU))
    result = evaluate(task, LOAD_INLINE, seed=0)
    if result.backend == "cuda":
        pytest.skip("this host has a GPU: test_load_inline_runs_in_the_sandbox_on_a_cuda_host covers it")
    assert result.outcome == "submission_failed" and result.flags == ["unsupported_language"]
    assert result.load.error.startswith("this host runs Triton and PyTorch; CUDA C++ needs a CUDA host")
    tile = "import tilelang\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    assert "TileLang needs a CUDA host" in evaluate(task, tile, seed=0).load.error


@pytest.mark.gpu
def test_load_inline_runs_in_the_sandbox_on_a_cuda_host(tmp_path):
    task = load_problem(_write(tmp_path / "level1", "19_ReLU.py", RELU))
    config = dataclasses.replace(harness_config(), timeout_s=300.0, total_timeout_s=600.0)
    result = evaluate(task, LOAD_INLINE, config, seed=0)
    assert result.backend == "cuda" and result.outcome == "ok", (result.harness_error, result.load)
    assert result.correct, result.correctness


def test_language_detection_never_raises_on_source_the_parser_cannot_take():
    from environment.evaluation.static.backends import foreign_language, unsupported_here
    deep = "# load_inline\nx = " + "-" * 200000 + "1\n"
    assert unsupported_here(deep, "cpu") is None
    assert foreign_language("import cupy as cp\n") == ("CUDA C++", "cupy")
    assert foreign_language("import torch\nx = torch.relu\n") is None
    assert unsupported_here("from torch.utils.cpp_extension import load_inline\n", "cuda") is None


def test_sizes_are_found_in_globals_of_any_case_ints_tuples_and_unpacking():
    from environment.tasks.scaling import find_sizes
    sizes = find_sizes(textwrap.dedent("""
        import torch
        N = 2048 * 2
        height = width = 128
        D, H, W = 16, 32, 32
        input_shape = (32768,)
        K = N // 2
        kernel_size = 3
        stride = (2, 2)
        num_groups = 32
        dim = 1
        features = 64

        class Model(torch.nn.Module):
            def forward(self, x):
                return x.reshape(-1, features)
    """))
    assert sizes.leaves["N"] == 4096 and sizes.leaves["height"] == sizes.leaves["width"] == 128
    assert (sizes.leaves["D"], sizes.leaves["H"], sizes.leaves["W"]) == (16, 32, 32)
    assert sizes.leaves["input_shape__0"] == 32768 and "input_shape = (input_shape__0,)" in sizes.derived
    assert "K = N // 2" in sizes.derived
    # parameters, small values and a global the model itself reads are never scaled
    assert set(sizes.scalable) == {"N", "height", "width", "D", "H", "W", "input_shape__0"}
