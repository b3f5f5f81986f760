"""inference.py end to end: the real environment server, a scripted OpenAI-compatible stub for the model."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from environment.trajectory import read_episodes
import inference
from environment.local_server import free_port
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
GRADED = ["gelu_bias", "rmsnorm", "causal_attention"]
FAKE_TOKEN = "hf_" + "Zz9" * 12  # token-shaped, not a real token

START = re.compile(r"\[START\] task=(?P<task>\S+) env=(?P<env>\S+) model=(?P<model>\S+)")
STEP = re.compile(r"\[STEP\] step=(?P<step>[1-9]\d*) action=(?P<action>none|sha=[0-9a-f]{8} bytes=\d+ lines=\d+) "
                  r"reward=(?P<reward>\d\.\d\d) done=(?P<done>true|false) error=(?P<error>\S[^\n]*)")
END = re.compile(r"\[END\] success=(?P<success>true|false) steps=(?P<steps>\d+) score=(?P<score>\d\.\d\d) "
                 r"rewards=(?P<rewards>(?:\d\.\d\d(?:,\d\.\d\d)*)?)")


@dataclass
class Block:
    task: str
    env: str
    model: str
    steps: list[dict]
    success: bool
    score: float
    rewards: list[float]


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    blocks: list[Block]

    @property
    def scores(self) -> dict[str, float]:
        return {b.task: b.score for b in self.blocks}


def parse_log(stdout: str) -> list[Block]:
    """Blocks of the exact SUBMISSION.md format; fails on any other line or an inconsistent block."""
    blocks: list[Block] = []
    current = None
    for line in stdout.splitlines():
        if m := START.fullmatch(line):
            assert current is None, f"[START] inside an open block: {line!r}"
            current = Block(m["task"], m["env"], m["model"], [], False, 0.0, [])
        elif m := STEP.fullmatch(line):
            assert current is not None, f"[STEP] outside a block: {line!r}"
            assert int(m["step"]) == len(current.steps) + 1, f"steps out of order: {line!r}"
            current.steps.append(m.groupdict())
        elif m := END.fullmatch(line):
            assert current is not None, f"[END] outside a block: {line!r}"
            current.success, current.score = m["success"] == "true", float(m["score"])
            current.rewards = [float(r) for r in m["rewards"].split(",")] if m["rewards"] else []
            assert int(m["steps"]) == len(current.steps)
            assert m["rewards"] == ",".join(s["reward"] for s in current.steps)
            assert 0.0 <= current.score <= 1.0
            assert current.score == max([0.0] + current.rewards)
            blocks.append(current)
            current = None
        else:
            raise AssertionError(f"stdout line outside the log format: {line!r}")
    assert current is None, "a block was not closed by [END]"
    return blocks


@pytest.fixture(scope="module")
def env_server(monitored_env_server):  # noqa: F811
    """The environment server, with its monitor on: the tests read how many steps the environment saw."""
    return monitored_env_server


def env_steps(env_url: str, task: str) -> int:
    """Steps the environment counted in its newest episode of ``task`` (GET /monitor)."""
    with urllib.request.urlopen(f"{env_url}/monitor?limit=1&task={task}", timeout=30) as r:
        return json.load(r)["recent"][0]["steps"]


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(timeout_s=60) as server:
        yield server


def run_in_process(monkeypatch, capsys, stub: OpenAIStub, policy: str, *args: str, env_url: str) -> Run:
    """inference.main() in this process: the cheaper way for cases that need no fresh interpreter."""
    for name in ("LOCAL_IMAGE_NAME", "IMAGE_NAME", "ENV_URL", "API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("API_BASE_URL", stub.base_url)
    monkeypatch.setenv("MODEL_NAME", f"policy/{policy}")
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    capsys.readouterr()
    returncode = inference.main([*args, "--env-url", env_url])
    out, err = capsys.readouterr()
    return Run(returncode, out, err, parse_log(out))


def run_inference(stub: OpenAIStub, policy: str, *args: str, env_url: str | None = None) -> Run:
    """inference.py as a judge runs it: a fresh interpreter whose whole stdout must be the log."""
    env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_IMAGE_NAME", "IMAGE_NAME", "ENV_URL", "API_KEY")}
    env.update(API_BASE_URL=stub.base_url, MODEL_NAME=f"policy/{policy}", HF_TOKEN=FAKE_TOKEN)
    command = [sys.executable, "inference.py", *args] + (["--env-url", env_url] if env_url else [])
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Run(proc.returncode, proc.stdout, proc.stderr, parse_log(proc.stdout))


_runs: dict[str, Run] = {}


def cached_run(stub, env_server, policy: str) -> Run:  # noqa: F811
    """One run per policy over the three graded tasks, one turn each, shared by the tests below."""
    if policy not in _runs:
        _runs[policy] = run_inference(stub, policy, "--turns", "1", "--seed", "3", env_url=env_server)
    return _runs[policy]


def test_correct_policy_plays_every_graded_task_in_the_exact_log_format(stub, env_server, tmp_path):  # noqa: F811
    output = tmp_path / "episodes.parquet"
    before = len(stub.requests)
    run = run_inference(stub, "correct", "--turns", "2", "--seed", "3", "--output", str(output), env_url=env_server)
    assert [(b.task, b.env, b.model) for b in run.blocks] == [(t, "kernel_env", "policy/correct") for t in GRADED]
    for block in run.blocks:
        assert [s["error"] for s in block.steps] == ["null", "null"]
        assert [s["done"] for s in block.steps] == ["false", "true"]
        assert block.success and block.score >= 0.5
    episodes = read_episodes(output)
    assert [(e.task_id, e.seed, e.model, e.score) for e in episodes] == [
        (b.task, 3, "policy/correct", b.score) for b in run.blocks]
    assert episodes[0].steps[0].prompt_messages[1].content.startswith("Task: gelu_bias\n")
    assert [m.role for m in episodes[0].messages] == ["system", "user", "assistant", "user", "assistant"]
    # The token reaches the model server and nowhere else.
    assert {r["headers"].get("authorization") for r in stub.requests[before:]} == {f"Bearer {FAKE_TOKEN}"}
    assert FAKE_TOKEN not in run.stdout + run.stderr
    assert FAKE_TOKEN.encode() not in output.read_bytes()


def test_broken_code_scores_below_the_shipped_solutions_on_every_task(stub, env_server):  # noqa: F811
    correct, broken = cached_run(stub, env_server, "correct"), cached_run(stub, env_server, "broken")
    assert [b.task for b in broken.blocks] == GRADED
    for task in GRADED:
        assert 0.0 <= broken.scores[task] < correct.scores[task] <= 1.0, correct.stdout + broken.stdout
    for block in broken.blocks:
        assert not block.success
        assert "elements outside atol" in block.steps[0]["error"]


def test_two_runs_with_the_same_seed_give_identical_scores_also_with_a_server_started_by_inference(stub, env_server):  # noqa: F811,E501
    first = cached_run(stub, env_server, "correct")
    second = run_inference(stub, "correct", "--turns", "1", "--seed", "3")  # starts and stops its own server
    assert second.scores == first.scores, first.stdout + second.stdout
    assert [b.rewards for b in second.blocks] == [b.rewards for b in first.blocks]
    assert "starting the environment server locally" in second.stderr


def test_a_model_that_times_out_uses_no_step_and_the_episode_ends_after_bounded_retries(  # noqa: F811
        stub, env_server, monkeypatch, capsys):
    before = len(stub.requests)
    run = run_in_process(monkeypatch, capsys, stub, "timeout", "--turns", "1", "--llm-timeout", "1", "--retries", "1",
                         env_url=env_server)
    assert [(b.task, b.steps, b.success, b.score, b.rewards) for b in run.blocks] == [
        (t, [], False, 0.0, []) for t in GRADED]
    assert len(stub.requests) - before == 2 * len(GRADED), "one call and one retry per episode"
    assert run.stderr.count("player error 2 of at most 2 in a row (no step, no turn used): model call failed: "
                            "timed out") == len(GRADED)
    assert [env_steps(env_server, t) for t in GRADED] == [0] * len(GRADED)


def test_a_model_server_error_is_retried_then_the_episode_ends_cleanly(stub, env_server, monkeypatch,  # noqa: F811
                                                                        capsys):
    before = len(stub.requests)
    run = run_in_process(monkeypatch, capsys, stub, "error", "--turns", "3", "--tasks", "gelu_bias", "--retries", "2",
                         env_url=env_server)
    assert [(b.steps, b.success, b.score) for b in run.blocks] == [([], False, 0.0)]
    assert run.stdout.splitlines() == ["[START] task=gelu_bias env=kernel_env model=policy/error",
                                       "[END] success=false steps=0 score=0.00 rewards="]
    assert len(stub.requests) - before == 3
    assert run.stderr.count("model call failed: HTTP 500: scripted server error") == 3
    assert "the player failed 3 times in a row: episode ends" in run.stderr
    assert env_steps(env_server, "gelu_bias") == 0


def test_prose_without_code_uses_no_step_and_the_next_prompt_says_why(stub, env_server, monkeypatch,  # noqa: F811
                                                                      capsys):
    before = len(stub.requests)
    run = run_in_process(monkeypatch, capsys, stub, "prose", "--turns", "2", "--retries", "1", env_url=env_server)
    for block in run.blocks:
        assert (block.steps, block.success, block.score, block.rewards) == ([], False, 0.0, [])
    assert len(stub.requests) - before == 2 * len(GRADED)
    second_prompt = stub.requests[before + 1]["body"]["messages"][1]["content"]
    assert "Your last reply could not be used: the reply has no code block defining class ModelNew" in second_prompt
    assert "(no step, no turn used): the reply has no code block defining class ModelNew" in run.stderr


def test_a_reply_without_code_then_a_reply_with_code_is_one_step_numbered_1(stub, env_server, monkeypatch,  # noqa: F811
                                                                          capsys, tmp_path):
    correct = cached_run(stub, env_server, "correct")  # first: its requests are not this run's
    before = len(stub.requests)
    output = tmp_path / "episodes.jsonl"
    run = run_in_process(monkeypatch, capsys, stub, "prose-then-correct", "--turns", "1", "--tasks", "gelu_bias",
                         "--output", str(output), env_url=env_server)
    [block] = run.blocks
    assert [(s["step"], s["action"], s["done"], s["error"]) for s in block.steps] == [
        ("1", correct.blocks[0].steps[0]["action"], "true", "null")]
    assert (block.success, block.score) == (True, correct.scores["gelu_bias"])
    assert len(stub.requests) - before == 2  # the prose reply, then the code: one turn of one
    assert "Your last reply could not be used" in stub.requests[before + 1]["body"]["messages"][1]["content"]
    assert env_steps(env_server, "gelu_bias") == 1
    [episode] = read_episodes(output)
    assert [s.step for s in episode.steps] == [1] and episode.steps[0].error is None


def test_a_reply_with_thinking_and_windows_line_endings_is_still_submitted(stub, env_server, monkeypatch,  # noqa: F811
                                                                           capsys):
    run = run_in_process(monkeypatch, capsys, stub, "think", "--turns", "1", "--tasks", "gelu_bias",
                         env_url=env_server)
    correct = cached_run(stub, env_server, "correct")
    assert run.blocks[0].steps[0]["action"] == correct.blocks[0].steps[0]["action"]
    assert run.blocks[0].score == correct.scores["gelu_bias"]


def test_an_unreachable_environment_still_prints_one_closed_block_per_task(stub, monkeypatch, capsys):
    run = run_in_process(monkeypatch, capsys, stub, "correct", env_url=f"http://127.0.0.1:{free_port()}")
    assert [(b.task, b.steps, b.success, b.score, b.rewards) for b in run.blocks] == [
        (t, [], False, 0.0, []) for t in GRADED]
    assert "episode ended early" in run.stderr


def test_turns_that_would_start_after_the_time_budget_are_skipped(stub, env_server, monkeypatch, capsys):  # noqa: F811
    run = run_in_process(monkeypatch, capsys, stub, "correct", "--tasks", "gelu_bias", "--time-budget", "1",
                         env_url=env_server)
    assert (run.blocks[0].steps, run.blocks[0].score) == ([], 0.0)
    assert "time budget spent" in run.stderr
