"""The playground for any OpenEnv server, below the page: forms from schemas, the address policy, the
renderer, and real episodes against OpenEnv's own template environment (``openenv init``), an
environment from PyPI (openenv-dipg-safety) and kernel_env, exported in ``openenv collect``'s format and read back with ``datasets`` and openenv's record.
"""
from __future__ import annotations

import json

import pytest
import yaml

from tests.support.openai_stub import OpenAIStub, solution
from tests.support.openenv_template import DIPG_QUESTION, dipg_env, mcp_env, template_env  # noqa: F401  (fixtures)
from ui.generic import render
from ui.generic.collect_export import from_kernel, write_collect
from ui.generic.live import LiveSessions
from ui.generic.runs import GenericRuns
from ui.generic.schema_form import FormError, assemble, fields, parse
from ui.generic.target import ALLOW_VAR, TargetError, check_address, connect, normalize
from ui.players import ModelSettings

NESTED = {
    "type": "object", "required": ["code", "mode", "size"],
    "properties": {
        "metadata": {"type": "object"},
        "code": {"type": "string", "description": "source"},
        "mode": {"enum": ["fast", "slow"]},
        "size": {"type": "integer"},
        "scale": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        "verbose": {"type": "boolean", "default": False},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "opts": {"$ref": "#/$defs/Opts"},
        "extra": {"type": "object", "additionalProperties": True},
    },
    "$defs": {"Opts": {"type": "object", "properties": {"depth": {"type": "integer"}, "name": {"type": "string"}},
                       "required": ["depth"]}},
}


@pytest.fixture
def allow_private(monkeypatch):
    monkeypatch.setenv(ALLOW_VAR, "1")


def test_schema_becomes_one_field_per_leaf_and_the_action_comes_back_typed():
    fs = fields(NESTED)
    kinds = {f.key: f.kind for f in fs}
    assert kinds == {"code": "code", "mode": "enum", "size": "integer", "scale": "number", "verbose": "boolean",
                     "tags": "list", "opts.depth": "integer", "opts.name": "string", "extra": "json"}
    values = {"code": "x = 1", "mode": "slow", "size": "3", "scale": None, "verbose": True, "tags": "1\n2",
              "opts.depth": 2, "opts.name": "", "extra": '{"a": [1]}'}
    action = assemble(fs, [values[f.key] for f in fs])
    assert action == {"code": "x = 1", "mode": "slow", "size": 3, "verbose": True, "tags": [1, 2],
                      "opts": {"depth": 2}, "extra": {"a": [1]}}


def test_bad_form_values_name_the_field_and_the_fix():
    fs = {f.key: f for f in fields(NESTED)}
    with pytest.raises(FormError, match="code is required"):
        parse(fs["code"], "  ")
    with pytest.raises(FormError, match="size: '2.5' is not a whole number"):
        parse(fs["size"], "2.5")
    with pytest.raises(FormError, match="extra: not valid JSON"):
        parse(fs["extra"], "{nope")
    with pytest.raises(FormError, match="not one of"):
        parse(fs["mode"], "medium")


def test_loopback_is_refused_on_a_space_unless_the_operator_allows_it(monkeypatch):
    monkeypatch.delenv(ALLOW_VAR, raising=False)
    monkeypatch.setenv("SPACE_ID", "owner/space")
    with pytest.raises(TargetError, match=f"private or loopback.*{ALLOW_VAR}=1"):
        check_address("http://127.0.0.1:8000")
    with pytest.raises(TargetError, match="private or loopback"):
        connect("http://10.1.2.3:8000")
    monkeypatch.setenv(ALLOW_VAR, "1")
    check_address("http://127.0.0.1:8000")
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.delenv(ALLOW_VAR)
    check_address("http://127.0.0.1:8000")  # a local run reaches what its user reaches
    monkeypatch.setenv(ALLOW_VAR, "0")
    with pytest.raises(TargetError, match="private or loopback"):
        check_address("http://localhost:8000")


def test_urls_are_checked_before_anything_is_fetched(allow_private):
    assert normalize("127.0.0.1:9/") == "http://127.0.0.1:9"
    with pytest.raises(TargetError, match="ftp:// is not supported"):
        normalize("ftp://example.com")
    with pytest.raises(TargetError, match="remove the user name"):
        normalize("http://user:pw@example.com")
    with pytest.raises(TargetError, match="cannot reach http://127.0.0.1:9/health"):
        connect("http://127.0.0.1:9")


def test_observations_render_escaped_with_markdown_html_off_tables_and_images():
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    out = render.value_html("observation", {
        "text": "<script>alert(1)</script>", "feedback_markdown": "# Title\n\n<b>raw</b> **bold**",
        "rows": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], "image": png,
        "url_img": "https://example.com/a.png", "fake": "javascript:alert(1)//.png"})
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<h1>Title</h1>" in out and "<strong>bold</strong>" in out and "<b>raw</b>" not in out
    assert "<table" in out and "<td><span class=\"gen-num\">2</span></td>" in out
    assert f'src="data:image/png;base64,{png}"' in out and 'src="https://example.com/a.png"' in out
    assert 'src="javascript' not in out


def test_template_env_by_hand_and_by_model_then_collect_export_loads(template_env, tmp_path, allow_private):  # noqa: F811
    datasets = pytest.importorskip("datasets")
    from openenv.core.harness.collect import EpisodeRecord as CollectRecord

    sessions, store = LiveSessions(), GenericRuns(tmp_path / "runs.sqlite3")
    live = sessions.connect("browser-aaaaaaaa", template_env)
    forms = live.forms()
    assert list(forms) == ["step"] and [(f.key, f.kind, f.required) for f in forms["step"]] == [
        ("message", "string", True)]
    live.reset(seed=7)
    step = live.human_step("step", assemble(forms["step"], ["hello"]))
    assert (step.reward, step.done, step.observation["echoed_message"]) == (0.5, False, "hello")
    store.save("browser-aaaaaaaa", live.episode)
    human = live.episode

    with OpenAIStub() as stub:
        live.reset(seed=7)
        settings = ModelSettings.checked("policy/tool-call", stub.base_url, 0.2, 256)
        for _ in range(2):
            live.model_step(settings, "hf_StubToken0123456789abcdefXYZW")
        sent = stub.requests[-1]["body"]
    tool = sent["tools"][0]["function"]
    assert tool["name"] == "step" and tool["parameters"]["required"] == ["message"]
    assert "metadata" not in tool["parameters"]["properties"]
    model_ep = live.episode
    assert model_ep.player == "model" and [s.observation["echoed_message"] for s in model_ep.steps] == [
        "stub says 1", "stub says 2"]
    assert [m["role"] for m in model_ep.messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    store.save("browser-aaaaaaaa", model_ep)
    assert [e.episode_id for e in store.episodes("browser-aaaaaaaa")] == [model_ep.episode_id, human.episode_id]

    folder = write_collect([human, model_ep], tmp_path / "export")
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert [CollectRecord(**r).episode_id for r in rows] == [human.episode_id, model_ep.episode_id]
    ds = datasets.load_dataset("json", data_files=str(folder / "results.jsonl"), split="train")
    assert set(ds.column_names) == {"episode_id", "messages", "reward", "done", "tool_trace", "metrics",
                                    "verify_metrics", "artifacts", "task", "extra"}
    assert ds[0]["reward"] == 0.5 and ds[0]["extra"]["player"] == "human" and ds[1]["extra"]["model"] == \
        "policy/tool-call"
    assert ds[0]["tool_trace"][0]["arguments"]["message"] == "hello"
    assert "evaluation/sft" in ds[1]["extra"]["data_use"]
    card = (folder / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["configs"][0]["data_files"][0]["path"] == "results.jsonl"
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["num_episodes"] == 2 and meta["players"] == ["human", "model"]
    assert "hf_StubToken" not in (folder / "results.jsonl").read_text()


def test_kernel_env_plays_through_the_generic_mode(env_server, tmp_path, allow_private):  # noqa: F811
    live = LiveSessions().connect("browser-bbbbbbbb", env_server)
    kinds = {f.key: f.kind for f in live.forms()["step"]}
    assert kinds == {"code": "code", "finish": "boolean"}
    live.reset(seed=1)
    task_id = live.episode.reset_observation["task_id"]
    step = live.human_step("step", {"code": solution(task_id), "finish": True})
    assert step.error is None and step.observation["correct"] is True and step.reward > 0 and step.done
    folder = write_collect([live.episode], tmp_path / "kernel")
    row = json.loads((folder / "results.jsonl").read_text())
    assert row["task"]["env"] == live.target.name and row["reward"] == step.reward


def test_hacked_kernel_episodes_are_kept_with_their_flags(tmp_path):
    from environment.trajectory import EpisodeRecord, StepRecord
    from environment.evaluation import flags as F
    hack = next(f for f in sorted(vars(F).values(), key=str) if isinstance(f, str) and F.is_hack(f))
    record = EpisodeRecord(task_id="gelu_bias", seed=3, player="human", steps=[
        StepRecord(step=1, code="class ModelNew: pass", observation={"flags": [hack], "correct": False}, reward=0.0,
                   done=True)])
    record.refresh()
    collected = from_kernel(record)
    assert collected.extra["hacked"] is True and collected.extra["hack_flags"] == [hack]
    folder = write_collect([record], tmp_path / "k")
    assert json.loads((folder / "metadata.json").read_text())["num_hacked"] == 1


def test_a_pypi_environment_plays_through_the_generic_mode(dipg_env, tmp_path, allow_private):  # noqa: F811
    datasets = pytest.importorskip("datasets")
    live = LiveSessions().connect("browser-cccccccc", dipg_env)
    assert [(f.key, f.kind, f.required) for f in live.forms()["step"]] == [("llm_response", "string", True)]
    live.reset(seed=None)
    assert live.episode.reset_observation["question"] == DIPG_QUESTION
    step = live.human_step("step", {"llm_response": "Two patients responded."})
    assert step.error is None and isinstance(step.reward, float) and step.observation is not None
    folder = write_collect([live.episode], tmp_path / "dipg")
    ds = datasets.load_dataset("json", data_files=str(folder / "results.jsonl"), split="train")
    assert ds[0]["reward"] == step.reward and ds[0]["task"]["env_url"] == live.target.url


def test_mcp_tools_get_one_form_each_and_are_called_as_tools(mcp_env, tmp_path, allow_private):  # noqa: F811
    live = LiveSessions().connect("browser-dddddddd", mcp_env)
    forms = live.forms()
    assert {name: [(f.key, f.kind, f.required) for f in fs] for name, fs in forms.items()} == {
        "add": [("n", "integer", True)], "shout": [("text", "string", True), ("times", "integer", False)]}
    live.reset(seed=None)
    live.human_step("add", assemble(forms["add"], ["3"]))
    second = live.human_step("add", assemble(forms["add"], [4]))
    shout = live.human_step("shout", assemble(forms["shout"], ["hi", 2]))
    assert second.observation["result"]["data"] == 7 and shout.observation["result"]["data"] == "HI HI"
    with OpenAIStub() as stub:
        step = live.model_step(ModelSettings.checked("policy/tool-call", stub.base_url, 0.2, 256), None)
        offered = [t["function"]["name"] for t in stub.requests[-1]["body"]["tools"]]
    assert offered == ["add", "shout"] and step.tool_name == "add" and step.observation["result"]["data"] == 8
    row = json.loads((write_collect([live.episode], tmp_path / "mcp") / "results.jsonl").read_text())
    assert [t["tool_name"] for t in row["tool_trace"]] == ["add", "add", "shout", "add"]
    assert row["tool_trace"][2]["arguments"] == {"text": "hi", "times": 2}
