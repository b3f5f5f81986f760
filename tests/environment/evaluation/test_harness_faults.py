"""Harness faults are never a score: each kind of environment failure ends with outcome
harness_error, a named cause, no reward and no turn consumed. Real processes throughout: the
faults come from real broken references, a real oversized task and a real killed evaluator."""
from __future__ import annotations

import dataclasses
import os
import signal
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

from environment.config import harness_config
from environment.evaluation import harness
from environment.evaluation.transport import frames
from environment.evaluation.transport.children import ChildHandle
from environment.evaluation.faults import HarnessFault
from environment.evaluation.transport.protocol import Run
from environment.tasks.registry import load_kernelbench

GOOD = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
SLOW = ("import time\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
        "        time.sleep(3)\n        return torch.relu(x)\n")


def _task(tmp_path: Path, name: str, forward: str, get_inputs: str = "[torch.randn(16, 33)]",
          init: str = "") -> object:
    src = tmp_path / f"{name}.py"
    src.write_text(textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                {init or "pass"}

            def forward(self, x):
                {forward}

        def get_inputs():
            return {get_inputs}

        def get_init_inputs():
            return []
    """))
    (task,) = load_kernelbench(src)
    return task


@pytest.mark.parametrize("name,forward,init,cause", [
    ("ref_raises", "raise RuntimeError('reference bug')", "", "the reference failed on trial 0"),
    ("ref_oom", "return x + torch.empty(2**40, dtype=torch.uint8).sum()", "", "the reference failed"),
    ("ref_init_fails", "return x", "raise ValueError('bad init')", "the reference failed to load"),
])
def test_a_failing_reference_is_a_harness_error_not_a_score(tmp_path, name, forward, init, cause):
    result = harness.evaluate(_task(tmp_path, name, forward, init=init), GOOD, seed=1)
    assert result.outcome == "harness_error" and cause in result.harness_error, result.harness_error
    assert result.load is None and result.correctness is None and not result.flags


def test_inputs_over_the_evaluators_cap_are_never_built_and_name_the_knob(tmp_path):
    task = _task(tmp_path, "huge_inputs", "return x", get_inputs="[torch.randn(2**15, 2**15)]")  # 4 GiB
    config = dataclasses.replace(harness_config(), max_input_mb=256)
    result = harness.evaluate(task, GOOD, config, seed=1)
    assert result.outcome == "harness_error"
    assert "4096 MiB, over the evaluator's 256 MiB cap (KERNEL_ENV_MAX_INPUT_MB)" in result.harness_error


def test_an_evaluator_killed_mid_evaluation_is_a_harness_error(tmp_path):
    task = _task(tmp_path, "plain_relu", "return torch.relu(x)")
    pool = harness.pool()
    pool.describe()
    zygotes = {z.proc.pid for z in pool._idle}
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(r=harness.evaluate(task, SLOW, seed=1, session="kill")))
    worker.start()
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        # the busy evaluator: its candidate child has moved into its job's directory (idle spares' have not)
        for zygote in zygotes:
            for child in _children(zygote):
                if any("ModelNew-" in _cwd(c) for c in _children(child)):
                    victim = child
        time.sleep(0.2)
    assert victim is not None, "no evaluator found"
    time.sleep(1.0)  # inside the candidate's sleep
    os.kill(victim, signal.SIGKILL)
    worker.join(120)
    result = box["r"]
    assert result.outcome == "harness_error" and "evaluator failed" in result.harness_error, result


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_a_message_the_evaluator_cannot_frame_is_its_own_fault(monkeypatch):
    child = ChildHandle(role="reference")
    try:
        monkeypatch.setattr(frames, "MAX_PAYLOAD", 1024)
        with pytest.raises(HarnessFault, match="breaks the frame limit"):
            child.send(Run(), [torch.zeros(4096)], 5.0)
    finally:
        child.kill()
        child.wait()


def test_an_episode_does_not_spend_a_turn_or_get_a_reward_on_a_harness_error(tmp_path, monkeypatch):
    from environment.env import KernelEnvironment
    from environment.models import KernelAction
    from environment.tasks.registry import registry

    folder = tmp_path / "extra"
    folder.mkdir()
    # fails from its second call on: loading (one call per model built) accepts it, the evaluation does not
    _task(folder, "broken_reference", "self.calls = getattr(self, 'calls', 0) + 1\n"
          "                if self.calls > 1:\n                    raise RuntimeError('reference bug')\n"
          "                return x")
    monkeypatch.setenv("KERNEL_ENV_EXTRA_TASKS", str(folder))
    registry.cache_clear()
    try:
        env = KernelEnvironment()
        env.reset(task_id="broken_reference", seed=3, max_turns=2)
        obs = env.step(KernelAction(code=GOOD))
        assert obs.outcome == "harness_error" and obs.reward is None and not obs.done
        assert obs.error.startswith("environment error (not your submission's fault")
        assert env.state.turn == 0 and env.state.history == [] and env.state.step_count == 1
        assert "not scored and the turn is not counted" in obs.feedback
    finally:
        registry.cache_clear()


def test_a_compile_worker_that_dies_is_a_harness_error_not_a_compile_verdict(tmp_path, monkeypatch):
    from environment.evaluation.modeled import aot
    from environment.evaluation.replay.rebuild import rebuild

    fused = Path(__file__).resolve().parents[3] / "environment/tasks/problems/gelu_bias/solutions/correct/triton_fused.py"
    signature = {"name": "gelu_bias_kernel", "signature": {"x_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32",
                 "n_elements": "i32", "N": "i32", "BLOCK": "constexpr"}, "constexprs": {"BLOCK": 1024},
                 "aligned": [], "options": {}}
    monkeypatch.setattr(aot, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(aot, "WORKER", tmp_path / "missing_worker.py")  # the interpreter exits with status 2
    with pytest.raises(HarnessFault, match="the sm_90 compile worker failed"):
        aot.compile_kernels(rebuild(fused.read_text()), [signature], timeout_s=60)
    assert not list((tmp_path / "cache").glob("*.json"))  # never cached


def test_a_replayer_that_breaks_by_itself_says_so(tmp_path):
    import hashlib

    from environment.evaluation.transport.protocol import Limits, Replayed, ReplayJob
    from environment.evaluation.replay.replayer import replayer_main
    from environment.evaluation.replay.trace import Trace

    module = "def broken(:\n"  # what rebuild.py generates never fails to parse: a fault of the trusted side
    job = ReplayJob(tmpdir=str(tmp_path), module=module, digest=hashlib.sha256(module.encode()).hexdigest(),
                    kernels=[], trace=Trace(storages=[], steps=[], outputs=[]), inputs=0, backend="cpu",
                    limits=Limits(memory_mb=2048, cpu_seconds=60, max_file_mb=16))
    replayer = ChildHandle(replayer_main, role="replayer")
    try:
        head, _ = replayer.request(job, Replayed, [], 60)
    finally:
        replayer.kill()
        replayer.wait()
    assert not head.ok and head.harness and "the generated kernel module does not parse" in head.error


def test_sandbox_route_answers_503_naming_the_backend_when_it_cannot_be_reached(monkeypatch):
    """GET /sandbox when the backend cannot describe itself (a Ray cluster the server cannot reach: a Ray Client
    proxy that timed out under load answered a bare 500 in CI): 503 with the cause and what to check."""
    from fastapi.testclient import TestClient

    import app as space
    from environment.evaluation import harness

    class Unreachable:
        def describe(self):
            raise ConnectionError("ray client connection timeout")

    monkeypatch.setattr(harness, "pool", lambda: Unreachable())
    reply = TestClient(space.app).get("/sandbox")
    assert reply.status_code == 503
    detail = reply.json()["detail"]
    assert "ConnectionError: ray client connection timeout" in detail and "KERNEL_ENV_RAY_ADDRESS" in detail
