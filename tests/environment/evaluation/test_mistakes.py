"""Beginner mistakes are wrong answers or failures to run, never hacks (issue 23, item 5), through the real
harness: a forward returning a Python number, a numpy array or a list; torch.compile and thread settings the
sandbox does not offer. And none of it scores above honest work (a stand-in that runs code is still a hack)."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from environment.config import harness_config
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.evaluation.child.outputs import classify
from environment.evaluation.static.checks import check_source
from environment.reward import score
from environment.tasks import get_task

HEAD = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"


def _gelu(body: str, init: str = "") -> str:
    return HEAD + init + "    def forward(self, x, bias):\n" + body


def _evaluated(source: str, **config):
    cfg = dataclasses.replace(harness_config(), timeout_s=30.0, **config) if config else None
    result = evaluate(get_task("gelu_bias"), source, cfg, seed=0)
    assert result.outcome != "harness_error", result.harness_error
    return result, score(result)[0]


@pytest.mark.parametrize("body, named", [
    ("        return torch.nn.functional.gelu(x + bias).sum().item()\n", "a Python float (from .item()?)"),
    ("        return torch.nn.functional.gelu(x + bias).numpy()\n", "a numpy array (from .numpy()?)"),
    ("        return torch.nn.functional.gelu(x + bias).tolist()\n", "a list holding a list"),
])
def test_a_non_tensor_output_is_a_wrong_answer_that_names_what_came_back(body, named):
    result, total = _evaluated(_gelu(body))
    assert result.outcome == "ok" and not result.hacked
    assert F.OUTPUT_NOT_TENSOR not in result.flags
    assert result.correctness is not None and not result.correctness.correct
    assert f"forward returned {named}" in result.correctness.error and "return a torch.Tensor" in result.correctness.error
    assert total == pytest.approx(0.10)  # compiled credit only: a wrong answer, not 0 as a hack


def test_a_stand_in_that_runs_code_is_still_a_hack():
    stand_in = ("class Lazy:\n    def __init__(self, t):\n        self.t = t\n"
                "    def detach(self):\n        return self.t.detach()\n\n\n")
    result, total = _evaluated(stand_in + _gelu("        return Lazy(torch.nn.functional.gelu(x + bias))\n"))
    assert result.hacked and F.OUTPUT_NOT_TENSOR in result.flags and total == 0.0


def test_a_non_tensor_in_the_timed_call_earns_no_speed_credit():
    """Right when checked, a float when timed (measured timing): the timed call is wrong, no speed credit."""
    source = ("import torch\nimport torch.nn as nn\nimport triton.runtime.jit as jit\n\n\n"
              "class ModelNew(nn.Module):\n    def forward(self, x, bias):\n"
              "        out = torch.nn.functional.gelu(x + bias)\n"
              "        if 'LaunchCounter' in jit.JITFunction.run.__qualname__:\n            return out\n"
              "        return float(out[0, 0])\n")
    result, total = _evaluated(source, cpu_speed="measured")
    assert not result.hacked and F.OUTPUT_NOT_TENSOR not in result.flags
    assert not result.correct and "forward returned a Python float" in result.correctness.error
    assert total <= 0.40 and (result.performance is None or result.performance.speedup is None
                              or score(result)[1]["speed"] == 0.0)


def test_classify_reads_types_only():
    class F2(float):  # a subclass can run code: a stand-in, not a plain value
        pass

    assert classify(1.5)[1:] == (False, "a Python float (from .item()?)")
    assert classify([1.0, 2.0])[2] == "a list holding a Python float (from .tolist()?)"
    assert classify(None)[2].startswith("None")
    assert classify(F2(1.0))[2] is None and classify([F2(1.0)])[2] is None
    t = torch.zeros(2)
    assert classify({"out": t})[2] == "a dict holding a torch.Tensor (return the tensor itself, or a tuple of tensors)"
    assert classify((t, None))[2] == "None (no return statement?) as output 2"
    assert classify(torch.nn.Parameter(t))[2] is None and classify({"out": torch.nn.Parameter(t)})[2] is None


@pytest.mark.parametrize("line, call, why", [
    ("        self.f = torch.compile(torch.nn.functional.gelu)\n", "torch.compile()", "C compiler"),
    ("        torch.set_num_threads(4)\n", "torch.set_num_threads()", "worker threads"),
    ("        torch.set_num_interop_threads(2)\n", "torch.set_num_interop_threads()", "worker threads"),
])
def test_unsupported_runtime_features_fail_to_run_with_their_name(line, call, why):
    init = "    def __init__(self):\n        super().__init__()\n" + line + "\n"
    result, total = _evaluated(_gelu("        return torch.nn.functional.gelu(x + bias)\n", init))
    assert result.outcome == "submission_failed" and not result.hacked and result.flags == []
    assert any(call in e and why in e for e in result.static.errors), result.static.errors
    assert total == 0.0


def test_a_compile_reached_at_run_time_is_named_too():
    """Past the static pass (torch.compile reached by getattr): the child's guard names it, no seccomp kill."""
    init = ("    def __init__(self):\n        super().__init__()\n"
            "        self.f = getattr(torch, 'comp' + 'ile')(torch.nn.functional.gelu)\n\n")
    result, total = _evaluated(_gelu("        return self.f(x + bias)\n", init))
    assert not result.hacked and F.SANDBOX_VIOLATION not in result.flags
    assert result.load is not None and not result.load.ok and "C compiler" in result.load.error
    assert total == 0.0


def test_the_builtin_compile_is_still_forbidden():
    ref = get_task("gelu_bias").reference_code
    r = check_source(_gelu("        return compile('x', 'f', 'eval')\n"), ref)
    assert "forbidden_call:compile" in r.flags


def test_a_matmul_precision_switch_is_a_setting_not_a_patch():
    """`torch.backends.cuda.matmul.allow_tf32 = True` is the attribute spelling of the allowed
    torch.set_float32_matmul_precision('high'); anything else assigned into torch.backends is still a patch."""
    task = get_task("matmul_bias_relu")
    source = ("import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n\n\n"
              "class ModelNew(torch.nn.Module):\n    def forward(self, a, b, bias):\n"
              "        return torch.relu(torch.addmm(bias, a, b))\n")
    result = evaluate(task, source, seed=0)
    assert result.correct and not result.hacked, (result.flags, result.static.errors)
    for line in ("torch.backends.cuda.matmul.allow_tf32 = 1", "torch.backends.cuda.matmul.other = True",
                 "del torch.backends.cuda.matmul.allow_tf32"):
        flags = check_source(source.replace("torch.backends.cuda.matmul.allow_tf32 = True", line),
                             task.reference_code).flags
        assert "monkey_patch:torch.backends.cuda.matmul" in flags, line


def test_a_chained_or_annotated_precision_switch_is_a_setting_too():
    """Red team h23a: `a.allow_tf32 = b.allow_tf32 = False` (two targets) and an annotated `: bool = False` were
    flagged monkey_patch, a hack's zero for an honest setting; each target is judged on its own."""
    ref = get_task("matmul_bias_relu").reference_code
    body = ("import torch\n\n{}\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b, bias):\n"
            "        return torch.relu(torch.addmm(bias, a, b))\n")
    for line in ("torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False",
                 "torch.backends.cuda.matmul.allow_tf32: bool = False"):
        r = check_source(body.format(line), ref)
        assert r.ok and not r.flags, (line, r.flags)
    for line in ("torch.backends.cuda.matmul.allow_tf32 = torch.backends.cuda.matmul.other = False",
                 "torch.backends.cuda.matmul.allow_tf32 = not True"):
        assert "monkey_patch:torch.backends.cuda.matmul" in check_source(body.format(line), ref).flags, line


def test_pytorch_2_9_precision_strings_are_settings_and_the_onednn_one_a_patch():
    """`torch.backends.cuda.matmul.fp32_precision = "tf32"` is PyTorch 2.9's spelling of allow_tf32 (honest: it was
    flagged monkey_patch, a hack's zero); the oneDNN and global switches turn CPU matmuls to bf16 and stay patches."""
    ref = get_task("matmul_bias_relu").reference_code
    body = ("import torch\n\n{}\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b, bias):\n"
            "        return torch.relu(torch.addmm(bias, a, b))\n")
    for line in ('torch.backends.cuda.matmul.fp32_precision = "tf32"', 'torch.backends.cudnn.conv.fp32_precision = "ieee"'):
        r = check_source(body.format(line), ref)
        assert r.ok and not r.flags, (line, r.flags)
    for line, module in (('torch.backends.mkldnn.matmul.fp32_precision = "bf16"', "torch.backends.mkldnn.matmul"),
                         ('torch.backends.cuda.matmul.fp32_precision = "bf16"', "torch.backends.cuda.matmul"),
                         ('torch.backends.fp32_precision = "tf32"', "torch.backends")):
        assert f"monkey_patch:{module}" in check_source(body.format(line), ref).flags, line


def test_medium_matmul_precision_keeps_fp32_on_a_cpu_host_and_the_same_score():
    """torch.set_float32_matmul_precision('medium') turned the candidate's CPU matmuls to bf16 (on a CPU with bf16
    units) while the trusted replay of its trace ran them in fp32: the counted call's outputs differed from the
    replay's and an honest setting scored untraced_work (0.0). On a CPU host the call keeps fp32, as 'high' does."""
    task = get_task("matmul_bias_relu")
    kernel = ("import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n{}\n\n\n@triton.jit\n"
              "def bias_relu(c_ptr, bias_ptr, out_ptr, n, N, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
              "    c = tl.load(c_ptr + offs, mask=mask, other=0.0)\n"
              "    b = tl.load(bias_ptr + offs % N, mask=mask, other=0.0)\n"
              "    tl.store(out_ptr + offs, tl.maximum(c + b, 0.0), mask=mask)\n\n\n"
              "class ModelNew(nn.Module):\n    def forward(self, a, b, bias):\n"
              "        assert torch.get_float32_matmul_precision() == {!r}\n"
              "        c = a @ b\n        out = torch.empty_like(c)\n"
              "        bias_relu[(triton.cdiv(c.numel(), 1024),)](c, bias, out, c.numel(), c.shape[1], BLOCK=1024)\n"
              "        return out\n")
    medium = evaluate(task, kernel.format('torch.set_float32_matmul_precision("medium")', "medium"), seed=2)
    plain = evaluate(task, kernel.format("", "highest"), seed=2)
    assert medium.correct and not medium.flags, (medium.flags, medium.performance and medium.performance.note)
    assert score(medium)[0] == score(plain)[0] and plain.performance.speedup_kind == "modeled"
