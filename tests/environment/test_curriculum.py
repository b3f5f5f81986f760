"""Against the real server on a loopback port: a curriculum shared by fresh connections rises as a
scripted policy succeeds; GET /tasks lists KernelBench problems (configured), generated tasks and
the problems that could not load, and a broken file affects nothing else."""
from __future__ import annotations

import json
import os
import textwrap
import urllib.error
import urllib.request

import pytest

from environment import KernelAction, KernelEnv
from environment.curriculum import Curriculum
from environment.tasks.kernelbench import reference_as_submission
from environment.local_server import LocalServer

EPISODES = 2  # successes at a level before it goes up (KERNEL_ENV_CURRICULUM_EPISODES)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    level = tmp_path_factory.mktemp("kb") / "level1"
    level.mkdir()
    (level / "1_Broken.py").write_text("import not_a_module_anywhere\n")
    (level / "2_Scale_.py").write_text(textwrap.dedent("""
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return x * 3.0

        batch_size = 64
        dim = 1000000

        def get_inputs():
            return [torch.randn(batch_size, dim)]

        def get_init_inputs():
            return []
    """))
    env = {"KERNEL_ENV_EXTRA_TASKS": str(level.parent), "KERNEL_ENV_CURRICULUM_EPISODES": str(EPISODES),
           "KERNEL_ENV_CURRICULUM_THRESHOLD": "1.0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with LocalServer(start_timeout_s=180) as srv:
            yield srv.url
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def _get(url: str):
    with urllib.request.urlopen(url, timeout=120) as r:
        return json.loads(r.read())


def test_tasks_lists_kernelbench_generated_and_unavailable_problems(server):
    tasks = {t["id"]: t for t in _get(server + "/tasks")}
    assert {"gelu_bias", "rmsnorm", "causal_attention"} <= set(tasks)
    scaled = tasks["kernelbench/level1/2_Scale"]
    assert scaled["title"] == "Scale" and scaled["difficulty"] == "easy"
    broken = tasks["kernelbench/level1/1_Broken"]
    assert broken["available"] is False and "No module named 'not_a_module_anywhere'" in broken["reason"]
    assert "gen/attention/5/0" in tasks and tasks["gen/elementwise/1/0"]["difficulty"] == "easy"
    with KernelEnv(base_url=server, message_timeout_s=180).sync() as client:
        assert client.reset(task_id="gelu_bias", seed=1).observation.task_id == "gelu_bias"
        obs = client.reset(task_id="kernelbench/level1/2_Scale", seed=1).observation
        assert "dim=1000000" in obs.prompt and "This host runs the trials at interpreter-sized shapes" in obs.prompt


def test_a_scripted_policy_climbs_a_curriculum_shared_by_fresh_connections(server):
    name = "climb"
    levels = []
    for episode in range(3 * EPISODES + 2):
        with KernelEnv(base_url=server, message_timeout_s=300).sync() as client:  # one connection per episode
            obs = client.reset(curriculum=name, max_turns=1).observation
            assert obs.task_id.startswith("gen/")
            result = client.step(KernelAction(code=reference_as_submission(obs.reference_code)))
            assert result.observation.correct, result.observation.feedback
        levels.append(_get(f"{server}/curricula/{name}")["level"])
    state = _get(f"{server}/curricula/{name}")
    assert levels == sorted(levels) and state["level"] >= 3, (levels, state["history"])
    assert [p["to"] for p in state["promotions"]] == list(range(2, state["level"] + 1))
    assert state["episodes"] == 3 * EPISODES + 2 and all(h["success"] for h in state["history"])


def test_failures_hold_the_level_and_bad_requests_name_the_fix(server):
    with KernelEnv(base_url=server, message_timeout_s=300).sync() as client:
        obs = client.reset(curriculum="stuck", max_turns=1).observation
        client.step(KernelAction(code=reference_as_submission(obs.reference_code, wrong=True)))
        with pytest.raises(Exception, match="curriculum picks the task"):
            client.reset(curriculum="stuck", task_id="gelu_bias")
    state = _get(f"{server}/curricula/stuck")
    assert state["level"] == 1 and state["history"][0]["success"] is False
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(f"{server}/curricula/never-used")
    assert err.value.code == 404


def test_the_window_keeps_the_level_below_in_play():
    c = Curriculum("w", episodes=1, threshold=1.0)
    for i in range(3):
        c.draw(f"e{i}")
        c.record(f"e{i}", True, 1.0)
    assert c.level == 4 and c.window() == [3, 4]
    drawn = {int(c.draw(f"x{i}").split("/")[2]) for i in range(60)}
    assert drawn == {3, 4}
