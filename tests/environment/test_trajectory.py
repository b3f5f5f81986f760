"""Episode records, their TRL views, writers, reader and the secret scrubber (environment/trajectory.py)."""
import json

import pytest

from environment.agent import SYSTEM_PROMPT, feedback_message
from environment.evaluation.result import (CorrectnessResult, EvalResult, LaunchCost, ModeledCost,
                                           PerformanceResult, StaticResult, TimingStats)
from environment.models import KernelObservation, Timings
from environment.trajectory import (REDACTED, EpisodeRecord, _from_row, export_rows, read_episodes, scrub, step_record,
                                    write_episodes, write_jsonl, write_parquet)

TOKEN = "hf_" + "Ab1" * 12  # token-shaped, not a real token
CODE = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, bias):\n        return x + bias\n"


def observation(turn, score, correct, **fields):
    evaluation = EvalResult(
        task_id="gelu_bias", backend="cpu", static=StaticResult(ok=True, uses_triton=True, triton_kernels=["k"]),
        correctness=CorrectnessResult(correct=correct, trials_passed=5 if correct else 2, trials_total=5),
        performance=PerformanceResult(
            speedup=1.8, speedup_kind="modeled",
            modeled_candidate=ModeledCost(target="H100 SXM", time_us=3.5,
                                          launches=[LaunchCost(name="k", flops={"fp32": 1e6})])))
    base = dict(task_id="gelu_bias", difficulty="easy", prompt="Fuse bias and GELU.", reference_code="class Model: ...",
                turn=turn, max_turns=3, compiled=True, correct=correct, trials_passed=5 if correct else 2,
                trials_total=5, speedup=1.8 if correct else None, speedup_kind="modeled" if correct else None,
                timings=Timings(source="modeled H100", reference=TimingStats(median_ms=0.01, min_ms=0.01, max_ms=0.01)),
                reward_breakdown={"compile": 0.1, "correctness": score - 0.1} if correct else {"compile": score},
                score=score, best_score=score, feedback=f"turn {turn} feedback", evaluation=evaluation,
                reward=score, done=turn == 3)
    base.update(fields)
    return KernelObservation(**base)


def reset_observation():
    return KernelObservation(task_id="gelu_bias", difficulty="easy", prompt="Fuse bias and GELU.",
                             reference_code="class Model: ...", turn=0, max_turns=3)


def episode(**fields):
    record = EpisodeRecord.start(reset_observation(), **{"seed": 7, "model": "policy/correct", "temperature": 0.0,
                                                         **fields})
    record.add_step(step_record(1, CODE, observation(1, 0.1, False), action_summary="sha=1 bytes=2 lines=3",
                                latency_ms=12.5, prompt_messages=record.prompt, raw_reply=f"```python\n{CODE}```"))
    record.add_step(step_record(2, None, error="model call failed: timed out", latency_ms=60000.0))
    record.add_step(step_record(3, CODE, observation(3, 0.7, True), action_summary="sha=4 bytes=5 lines=6",
                                done=True, raw_reply="Final:\n```python\n" + CODE + "```"))
    return record


def rounded(value):
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def test_an_episode_derives_rewards_best_score_and_success_from_its_steps():
    record = episode()
    assert record.rewards == [0.1, 0.0, 0.7]
    assert record.score == 0.7
    assert record.success is True
    assert record.steps[0].observation["reward_breakdown"] == {"compile": 0.1}
    assert "evaluation" not in record.steps[0].observation and "prompt" not in record.steps[0].observation
    assert EvalResult.model_validate_json(record.steps[2].evaluation_json).performance.speedup == 1.8
    assert record.steps[1].observation is None and record.steps[1].error == "model call failed: timed out"


def test_a_submission_that_never_reached_the_environment_has_no_reward():
    record = episode()
    record.add_step(step_record(4, CODE, error="environment step failed: connection refused", done=True))
    assert record.rewards == [0.1, 0.0, 0.7, None] and record.score == 0.7
    assert export_rows([record])[0]["rewards"][3] is None


def test_an_episode_with_no_correct_step_is_not_a_success():
    record = EpisodeRecord.start(reset_observation())
    record.add_step(step_record(1, CODE, observation(1, 0.1, False)))
    assert (record.score, record.success) == (0.1, False)


def test_trl_views_hold_the_task_prompt_then_replies_and_feedback_and_end_on_the_assistant():
    record = episode()
    assert [m.role for m in record.prompt] == ["system", "user"]
    assert record.prompt[0].content == SYSTEM_PROMPT
    assert record.prompt[1].content.startswith("Task: gelu_bias\n")
    assert [m.role for m in record.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert record.messages[2].content == f"```python\n{CODE}```"
    assert record.messages[3].content == feedback_message(record.steps[0].observation)
    assert record.messages[4].content.startswith("Final:")


def test_a_human_step_without_a_raw_reply_becomes_a_fenced_assistant_turn():
    record = EpisodeRecord.start(reset_observation(), player="human")
    record.add_step(step_record(1, CODE, observation(1, 0.1, False)))
    assert record.messages[-1].content == "```python\n" + CODE.rstrip("\n") + "\n```"


@pytest.mark.parametrize("name", ["episodes.jsonl", "episodes.parquet"])
def test_episodes_round_trip_through_our_reader(tmp_path, name):
    records = [episode(), episode(player="human")]
    path = write_episodes(records, tmp_path / name)
    assert read_episodes(path) == records


@pytest.mark.parametrize("builder, name", [("json", "episodes.jsonl"), ("parquet", "episodes.parquet")])
def test_exports_load_with_datasets_and_keep_their_nested_fields(tmp_path, monkeypatch, builder, name):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    records = [episode(), episode()]
    write_episodes(records, tmp_path / name)
    loaded = datasets.load_dataset(builder, data_files=str(tmp_path / name), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == 2
    row = loaded[0]
    assert row["messages"] == [m.model_dump() for m in records[0].messages]
    assert row["prompt"] == [m.model_dump() for m in records[0].prompt]
    assert row["steps"][2]["observation"]["speedup"] == 1.8
    assert row["steps"][2]["observation"]["timings"]["reference"]["median_ms"] == 0.01
    assert row["steps"][1]["observation"] is None
    assert row["rewards"] == [0.1, 0.0, 0.7]
    # Arrow merges struct keys across rows (missing ones come back as None); our reader drops those.
    # The json builder of datasets may also change a float in its last digit, hence the rounding.
    back = _from_row(dict(row), "row 0")
    assert rounded(back.model_dump()) == rounded(records[0].model_dump())


def test_scrubber_redacts_token_looking_strings_and_configured_values_everywhere():
    value = {"a": f"Bearer {TOKEN}", "b": ["my-secret-value and more", 3, None], "c": {"d": ("hf_hub_download",)}}
    assert scrub(value, ["my-secret-value"]) == {
        "a": f"Bearer {REDACTED}", "b": [f"{REDACTED} and more", 3, None], "c": {"d": ["hf_hub_download"]}}


@pytest.mark.parametrize("name", ["episodes.jsonl", "episodes.parquet"])
def test_exports_contain_no_token_from_any_field(tmp_path, monkeypatch, name):
    monkeypatch.setenv("HF_TOKEN", "configured-token-123")
    record = episode(model=f"org/model?key={TOKEN}")
    record.steps[0].raw_reply += f"\n# token: {TOKEN} configured-token-123\n"
    record.steps[2].code = CODE + "# key: custom-secret-456\n"
    path = write_episodes([record], tmp_path / name, secrets=["custom-secret-456"])
    raw = path.read_bytes()
    for secret in (TOKEN, "configured-token-123", "custom-secret-456"):
        assert secret.encode() not in raw
    back = read_episodes(path)[0]
    assert back.model == f"org/model?key={REDACTED}"
    assert back.steps[2].code.endswith(f"# key: {REDACTED}\n")
    assert record.steps[2].code.endswith("custom-secret-456\n"), "the in-memory record is left alone"


def test_reading_a_corrupt_jsonl_file_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    write_jsonl([episode()], path)
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl line 2 is not JSON"):
        read_episodes(path)


def test_reading_a_jsonl_row_that_is_not_an_episode_says_so(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"text": "hello"}) + "\n")
    with pytest.raises(ValueError, match=r"other.jsonl line 1 is not an episode record"):
        read_episodes(path)


def test_reading_a_file_that_is_not_parquet_says_so(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 nope")
    with pytest.raises(ValueError, match=r"bad.parquet is not a readable Parquet file"):
        read_episodes(path)


def test_unknown_suffixes_and_missing_files_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"name it \*.jsonl or \*.parquet"):
        write_episodes([episode()], tmp_path / "episodes.csv")
    with pytest.raises(FileNotFoundError, match="no episode file at"):
        read_episodes(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="at least one record"):
        write_parquet([], tmp_path / "empty.parquet")
