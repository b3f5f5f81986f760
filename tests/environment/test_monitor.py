"""The monitor against the real server: sessions that submit correct, wrong and hacking code (shipped
solutions and red-team attacks), one that never submits, and one whose evaluations are harness errors
(a real server with a zero input cap); then GET /monitor's summaries, the episode records, the
token, and the TRL adapter's rewards against what the server recorded."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from environment.client import KernelEnv
from environment.evaluation.flags import name_of
from environment.models import KernelAction
from environment.tasks import get_task
from environment.training import episode_reward
from environment.training.trl_env import EpisodeRecorder, KernelEnvFactory, build_rows
from environment.trajectory import EpisodeRecord, read_episodes
from server.monitor import register
from tests.redteam.expected import EXPECTED
from tests.support.env_server import started_server

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
ATTACKS = ROOT / "tests" / "redteam" / "attacks"
TOKEN = "monitor-test-token-5f2c9a7e"
HACKS = ("a02_try_except_fallback.py", "a16_thread_import.py")


def solution(task_id: str, kind: str, name: str | None = None) -> str:
    files = get_task(task_id).solutions[kind]
    chosen = next((f for f in files if name is None or f.name == name), None)
    assert chosen is not None, (task_id, kind, name)
    return chosen.read_text()


def get(url: str, path: str, token: str | None = TOKEN) -> dict:
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=60) as r:
        return json.loads(r.read())


def status_of(url: str, path: str, **headers: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, headers=headers), timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def play(url: str, task_id: str, codes: list[str], max_turns: int = 3) -> str:
    with KernelEnv(base_url=url, message_timeout_s=600).sync() as env:
        env.reset(task_id=task_id, seed=1, max_turns=max_turns)
        episode_id = env.state().episode_id
        for code in codes:
            env.step(KernelAction(code=code))
    return episode_id


@pytest.fixture(scope="module")
def server():
    with started_server(KERNEL_ENV_MONITOR="1", KERNEL_ENV_MONITOR_TOKEN=TOKEN) as s:
        yield s


@pytest.fixture(scope="module")
def played(server):
    """Episode ids by kind, played over the WebSocket like any client."""
    url = server.url
    ids = {
        "correct": play(url, "gelu_bias", [solution("gelu_bias", "correct", "torch_two_ops.py")]),
        "wrong_then_correct": play(url, "gelu_bias", [solution("gelu_bias", "wrong", "tanh_approx.py"),
                                                      solution("gelu_bias", "correct", "torch_two_ops.py")]),
        "no_submission": play(url, "rmsnorm", []),
    }
    for name in HACKS:
        ids[name] = play(url, EXPECTED[name].task, [(ATTACKS / name).read_text()])
    return ids


def test_the_summaries_count_what_the_sessions_did(server, played):
    s = get(server.url, "/monitor?limit=50")
    mine = {r["episode_id"]: r for r in s["recent"]}
    assert set(played.values()) <= set(mine)
    correct, mixed = mine[played["correct"]], mine[played["wrong_then_correct"]]
    assert correct["success"] and correct["reward"] > 0.5 and correct["steps"] == 1 and not correct["hacked"]
    assert mixed["steps"] == 2 and mixed["success"] and mixed["rewards"][0] < mixed["rewards"][1]
    assert mixed["code_hashes"][0] != mixed["code_hashes"][1]
    assert mine[played["no_submission"]]["steps"] == 0 and mine[played["no_submission"]]["reward"] == 0.0
    for name in HACKS:
        hack = mine[played[name]]
        flag = name_of(EXPECTED[name].flag)  # findings carry the name; the detail (e.g. ":threading") stays in them
        assert hack["hacked"] and hack["reward"] == 0.0 and flag in hack["flags"], hack
        assert s["hack_flags"][flag] >= 1 and s["flags"][flag] >= 1
    # hack rate over judged steps; success rate over episodes with a judged step
    judged_steps = 1 + 2 + len(HACKS)
    assert s["steps"] == s["judged_steps"] == judged_steps
    assert s["hack_rate"] == pytest.approx(len(HACKS) / judged_steps, abs=1e-4)
    assert s["success_rate"] == pytest.approx(2 / (2 + len(HACKS)), abs=1e-4)
    rate = s["evaluations_per_minute"]
    assert rate["buffer"] > 0 and rate["last_minute"] <= judged_steps and s["harness_errors"]["count"] == 0
    gelu = s["tasks"]["gelu_bias"]
    assert gelu["episodes"] == 2 + sum(EXPECTED[n].task == "gelu_bias" for n in HACKS)
    assert sum(gelu["reward_histogram"]["counts"]) == gelu["episodes"]
    assert gelu["reward_histogram"]["counts"][0] == sum(EXPECTED[n].task == "gelu_bias" for n in HACKS)
    assert s["tasks"]["rmsnorm"]["no_submission"] == 1

    hacks_only = get(server.url, "/monitor?kind=hack")["recent"]
    assert {r["episode_id"] for r in hacks_only} == {played[n] for n in HACKS}
    sampled = get(server.url, "/monitor?sample=true&limit=2&seed=3")["recent"]
    assert len(sampled) == 2 and {r["episode_id"] for r in sampled} <= set(played.values())


def test_an_episode_comes_back_as_the_playgrounds_record(server, played):
    record = EpisodeRecord.model_validate(get(server.url, f"/monitor/episodes/{played['wrong_then_correct']}"))
    assert [s.code for s in record.steps] == [solution("gelu_bias", "wrong", "tanh_approx.py"),
                                              solution("gelu_bias", "correct", "torch_two_ops.py")]
    assert record.steps[1].observation["correct"] is True and record.steps[1].evaluation_json
    assert record.task_id == "gelu_bias" and record.seed == 1 and record.success


def test_the_token_is_required_and_never_logged(server, played):
    assert status_of(server.url, "/monitor") == 401
    assert status_of(server.url, "/monitor", Authorization="Bearer wrong-token") == 401
    assert status_of(server.url, "/monitor", **{"X-Monitor-Token": TOKEN}) == 200
    assert status_of(server.url, "/monitor/episodes/nope", Authorization=f"Bearer {TOKEN}") == 404
    assert status_of(server.url, "/monitor?kind=bogus", Authorization=f"Bearer {TOKEN}") == 400
    assert TOKEN not in server.log_tail(10**7)
    assert TOKEN not in json.dumps(get(server.url, "/monitor?limit=100"))


def test_the_monitor_is_off_unless_enabled(monkeypatch):
    app = FastAPI()
    register(app)
    client = TestClient(app)
    monkeypatch.delenv("KERNEL_ENV_MONITOR", raising=False)
    off = client.get("/monitor")
    assert off.status_code == 404 and "KERNEL_ENV_MONITOR=1" in off.json()["detail"]
    monkeypatch.setenv("KERNEL_ENV_MONITOR", "1")
    monkeypatch.delenv("KERNEL_ENV_MONITOR_TOKEN", raising=False)
    assert client.get("/monitor").status_code == 200


def test_the_trl_adapter_reward_is_the_servers(server, tmp_path):
    """reset(**row) / submit_kernel / get_reward as GRPOTrainer calls them, against the server's records."""
    url = server.url
    rows = build_rows(url, ["gelu_bias"], seeds=[5], max_turns=2)
    assert rows[0]["prompt"][1]["content"].startswith("Task: gelu_bias") and "submit_kernel" in rows[0]["prompt"][0]["content"]
    factory = KernelEnvFactory(url, recorder=EpisodeRecorder(tmp_path / "rollouts.jsonl"))
    env = factory()
    try:
        assert env.reset(**rows[0]) is None  # the row's prompt already holds the task
        report = env.submit_kernel(solution("gelu_bias", "correct", "torch_two_ops.py"))
        assert report.startswith("Result: turn 1: score") and "correct" in report
        reward = env.get_reward()
        server_record = EpisodeRecord.model_validate(get(url, f"/monitor/episodes/{env.episode_id}"))
        assert reward == pytest.approx(episode_reward(server_record.rewards)) and reward > 0.5
        first = env.episode_id
        env.reset(**rows[0])  # the same session, a new episode: the model replies without calling the tool
        assert env.get_reward() == 0.0 and env.submit_kernel("x = 1").startswith("The episode is over")
        assert get(url, f"/monitor/episodes/{env.episode_id}")["steps"] == []
    finally:
        factory.close()
    local = read_episodes(tmp_path / "rollouts.jsonl")
    assert [r.episode_id for r in local] == [first, env.episode_id]
    assert local[0].rewards == server_record.rewards and local[0].steps[0].code == server_record.steps[0].code


def test_a_harness_error_is_an_error_never_a_reward(tmp_path):
    """A server whose evaluator refuses every input (KERNEL_ENV_MAX_INPUT_MB=0): real harness errors."""
    with started_server(KERNEL_ENV_MONITOR="1", KERNEL_ENV_MAX_INPUT_MB="0") as server:
        factory = KernelEnvFactory(server.url, recorder=EpisodeRecorder(tmp_path / "r.jsonl"))
        env = factory()
        try:
            env.reset(task_id="gelu_bias", seed=0, max_turns=2)
            report = env.submit_kernel(solution("gelu_bias", "correct", "torch_two_ops.py"))
            assert report.startswith("Environment error (not your submission's fault") and "KERNEL_ENV_MAX_INPUT_MB" in report
            assert env.get_reward() is None
            assert factory.stats == {"rollouts": 1, "environment_errors": 1, "unscored": 1}
        finally:
            factory.close()
        s = get(server.url, "/monitor", token=None)
        assert s["harness_errors"]["count"] == 1 and "KERNEL_ENV_MAX_INPUT_MB" in s["harness_errors"]["recent"][0]["error"]
        gelu = s["tasks"]["gelu_bias"]
        assert gelu["harness_errors"] == 1 and sum(gelu["reward_histogram"]["counts"]) == 0
        assert gelu["mean_reward"] is None and s["recent"][0]["reward"] is None
    assert read_episodes(tmp_path / "r.jsonl")[0].rewards == [None]


def test_curriculum_rows_leave_the_task_to_the_server():
    rows = build_rows("http://127.0.0.1:9", curriculum="easy-first", seeds=[0, 1], max_turns=3)  # no connection made
    assert [r["seed"] for r in rows] == [0, 1] and all(r["curriculum"] == "easy-first" for r in rows)
    assert all("task_id" not in r and r["max_turns"] == 3 for r in rows)
    with pytest.raises(ValueError, match="task ids"):
        build_rows("http://127.0.0.1:9", [], seeds=[0])
