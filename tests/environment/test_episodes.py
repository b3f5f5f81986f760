"""Whole episodes over the WebSocket client against the real server on a loopback port,
and every bad input pinned to the observation (or error) it must produce."""
from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
from pydantic import ValidationError

from environment import KernelAction, KernelEnv
from environment.local_server import LocalServer

ROOT = Path(__file__).resolve().parents[2]
GELU = ROOT / "environment/tasks/problems/gelu_bias/solutions"
HEADER = "import torch\nimport torch.nn as nn\n"


def body(forward: str, top: str = "") -> str:
    return HEADER + top + ("\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                           "    def forward(self, x, bias):\n" + "".join(f"        {l}\n" for l in forward.splitlines()))


@pytest.fixture(scope="module")
def server():
    saved = {k: os.environ.get(k) for k in ("KERNEL_ENV_TIMEOUT_S", "KERNEL_ENV_MEMORY_MB")}
    os.environ.update(KERNEL_ENV_TIMEOUT_S="6", KERNEL_ENV_MEMORY_MB="1024")
    try:
        with LocalServer(start_timeout_s=180) as srv:
            yield srv.url
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@pytest.fixture
def env(server):
    with KernelEnv(base_url=server, message_timeout_s=180).sync() as client:
        client.reset(task_id="gelu_bias", seed=7, max_turns=20)
        yield client


def test_post_reset_with_empty_body_answers_200_without_evaluating(server):
    req = urllib.request.Request(server + "/reset", data=b"{}", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        payload = json.loads(r.read())
    obs = payload["observation"]
    assert r.status == 200 and obs["task_id"] in ("gelu_bias", "rmsnorm", "causal_attention")
    assert obs["evaluation"] is None and obs["compiled"] is None and payload["reward"] == 0.0


def test_tasks_route_lists_the_graded_tasks_first(server):
    with urllib.request.urlopen(server + "/tasks", timeout=30) as r:
        tasks = json.loads(r.read())
    assert [t["id"] for t in tasks[:3]] == ["gelu_bias", "rmsnorm", "causal_attention"]
    assert [t["difficulty"] for t in tasks[:3]] == ["easy", "medium", "hard"]
    assert all(t["graded"] for t in tasks[:3]) and len(tasks) >= 12
    assert set(tasks[0]) == {"id", "difficulty", "title", "graded"}


def test_reset_honours_task_seed_episode_id_and_max_turns(server):
    with KernelEnv(base_url=server).sync() as client:
        obs = client.reset(task_id="rmsnorm", seed=11, episode_id="ep-1", max_turns=3).observation
        state = client.state()
    assert (obs.task_id, obs.difficulty, obs.max_turns, obs.turn) == ("rmsnorm", "medium", 3, 0)
    assert "class Model" in obs.reference_code and "Task: rmsnorm" in obs.prompt
    assert (state.episode_id, state.seed, state.task_id, state.step_count) == ("ep-1", 11, "rmsnorm", 0)


def test_reset_by_difficulty_picks_a_task_of_that_difficulty(server):
    with KernelEnv(base_url=server).sync() as client:
        assert client.reset(difficulty="hard", seed=1).observation.difficulty == "hard"


def test_unknown_task_id_is_an_error_listing_valid_ids(server):
    with KernelEnv(base_url=server).sync() as client:
        with pytest.raises(Exception, match="unknown task_id 'nope'; valid ids: gelu_bias, rmsnorm, causal_attention"):
            client.reset(task_id="nope")


def test_step_before_reset_is_a_clear_error(server):
    with KernelEnv(base_url=server).sync() as client:
        with pytest.raises(Exception, match=r"call reset\(\) before step\(\)"):
            client.step(KernelAction(code="x"))


def test_an_episode_scores_correct_above_wrong_and_a_hack_at_zero(server):
    with KernelEnv(base_url=server, message_timeout_s=180).sync() as client:
        client.reset(task_id="gelu_bias", seed=3, max_turns=3)
        good = client.step(KernelAction(code=(GELU / "correct/torch_two_ops.py").read_text()))
        wrong = client.step(KernelAction(code=(GELU / "wrong/tanh_approx.py").read_text()))
        hack = client.step(KernelAction(code=body("return torch.nn.functional.gelu(x + bias)",
                                                  top="import time\ntime.perf_counter = lambda: 0.0\n")))
        state = client.state()
    g, w, h = good.observation, wrong.observation, hack.observation
    assert g.correct and g.compiled and g.trials_passed == g.trials_total == 5 and g.score >= 0.5
    assert not w.correct and w.compiled and w.score <= 0.4 and w.score < g.score
    assert h.score == 0.0 and "monkey_patch:time" in h.flags and h.done
    assert abs(sum(g.reward_breakdown.values()) - g.score) < 1e-6
    assert good.reward == g.score and g.best_score == g.score == w.best_score
    assert state.history == [g.score, w.score, 0.0] and state.turn == 3 and state.best_score == g.score
    assert w.evaluation.correctness.mismatch.indices and "outside atol" in w.feedback


def test_finish_ends_the_episode_and_further_steps_are_refused(env):
    obs = env.step(KernelAction(code=(GELU / "correct/torch_two_ops.py").read_text(), finish=True)).observation
    assert obs.done
    with pytest.raises(Exception, match="the episode is over"):
        env.step(KernelAction(code="x"))


BAD_INPUTS = {
    "empty": ("", "The submission is empty"),
    "syntax_error": ("class ModelNew(:\n", "SyntaxError at line 1"),
    "no_model_new": (HEADER + "class Other(nn.Module):\n    pass\n", "No top-level class ModelNew"),
    "wrong_signature": (body("return x").replace("def forward(self, x, bias)", "def forward(self, x)"),
                        "ModelNew.forward takes 1 input(s) but the reference Model.forward takes 2"),
    "wrong_shape": (body("return (x + bias)[:, :-1]"), "output shape"),
    "wrong_dtype": (body("return torch.nn.functional.gelu(x + bias).double()"), "output dtype torch.float64"),
    "exception": (body("raise ValueError('boom')"), "ValueError: boom"),
    "infinite_loop": (body("while True:\n    pass"), "ran past the time limit"),
    "memory_bomb": (body("big = torch.empty(1 << 40)\nreturn big"), "ran out of memory"),
    "sys_exit_at_import": (HEADER + "import sys\nsys.exit(3)\n" + body("return x")[len(HEADER):], "SystemExit: 3"),
    "os_exit_at_import": (HEADER + "import os\nos._exit(0)\n" + body("return x")[len(HEADER):], "_exit"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_becomes_an_observation_with_the_cause(env, name):
    code, expected = BAD_INPUTS[name]
    obs = env.step(KernelAction(code=code)).observation
    assert obs.correct is False or obs.correct is None
    assert expected in obs.feedback, obs.feedback
    assert obs.error and obs.score <= 0.4
    if name in ("empty", "syntax_error", "no_model_new", "wrong_signature"):
        assert obs.compiled is False and obs.score == 0.0


REFUSED_ON_THE_WIRE = {
    # KernelAction.code is a str of at most MAX_CODE_BYTES characters: the action itself cannot be built, so
    # nothing reaches the harness and no turn is spent (the server refuses the same frame with VALIDATION_ERROR)
    "oversized": ("#" * (256 * 1024 + 10), "at most 262144 characters"),
    "non_utf8": ("x = '\udc80'\n", "unable to parse raw data as a unicode string"),
}


@pytest.mark.parametrize("name", sorted(REFUSED_ON_THE_WIRE))
def test_input_the_wire_refuses_names_its_cause_and_spends_no_turn(env, name):
    code, expected = REFUSED_ON_THE_WIRE[name]
    turn = env.state().turn
    with pytest.raises(ValidationError, match=expected):
        KernelAction(code=code)
    assert env.state().turn == turn


def test_the_server_keeps_serving_after_every_bad_input(env):
    obs = env.step(KernelAction(code=(GELU / "correct/torch_two_ops.py").read_text())).observation
    assert obs.correct and obs.score >= 0.5


def test_nan_outputs_come_back_as_a_readable_mismatch(env):
    obs = env.step(KernelAction(code=body("y = torch.nn.functional.gelu(x + bias)\ny[0, 0] = float('nan')\n"
                                          "return y"))).observation
    m = obs.evaluation.correctness.mismatch
    assert not obs.correct and m.indices[0] == [0, 0] and m.actual[0] != m.actual[0]  # NaN survives the wire
    assert obs.max_abs_error == float("inf")
    assert '"NaN"' in obs.model_dump_json()
