"""Audit labels and signal tallies: labels are checked, kept on the episode record and survive the
store and both export formats (rows with and without labels side by side); the tally counts flagged
steps per minute over the last hour; the review sample puts flagged steps first."""
from __future__ import annotations

import pytest

from environment.audit import Tally, review_sample
from environment.evaluation.result import EvalResult, Signal, StaticResult
from environment.models import KernelObservation
from environment.trajectory import EpisodeRecord, StepRecord, read_episodes, write_episodes
from ui.store import EpisodeStore


def _record(steps: int = 2) -> EpisodeRecord:
    record = EpisodeRecord(task_id="gelu_bias", seed=1, player="human", max_turns=3)
    for n in range(1, steps + 1):
        record.add_step(StepRecord(step=n, code="x", observation={"task_id": "gelu_bias"}, reward=0.1 * n))
    return record


def _obs(*verdicts: str) -> KernelObservation:
    ev = EvalResult(task_id="t", backend="cpu", static=StaticResult(ok=True),
                    signals=[Signal(name=f"s{i}", verdict=v, why="") for i, v in enumerate(verdicts)])
    return KernelObservation(task_id="t", evaluation=ev)


def test_a_label_is_checked_and_replaces_an_earlier_label_of_the_same_step():
    record = _record()
    record.add_label(1, "wrong_verdict", "first look")
    record.add_label(1, "reward_hack", "second look")
    assert [(x.step, x.label, x.note) for x in record.labels] == [(1, "reward_hack", "second look")]
    with pytest.raises(ValueError, match="choose one of clean, reward_hack, wrong_verdict, harness_bug"):
        record.add_label(1, "hack")
    with pytest.raises(ValueError, match="step 3 is not in this episode"):
        record.add_label(3, "clean")
    with pytest.raises(ValueError, match="keep it under 2000"):
        record.add_label(2, "clean", "x" * 2001)


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_labels_round_trip_through_the_store_and_both_export_formats(tmp_path, suffix):
    labelled, plain = _record(), _record(1)
    labelled.add_label(2, "harness_bug", "the replay crashed")
    store = EpisodeStore(tmp_path / "episodes.sqlite3")
    store.save("browser-0001", labelled)
    store.save("browser-0001", plain)
    back = store.get(labelled.episode_id)
    assert back.labels == labelled.labels
    path = write_episodes(store.records("browser-0001"), tmp_path / f"episodes.{suffix}")
    by_id = {r.episode_id: r for r in read_episodes(path)}
    assert by_id[labelled.episode_id].labels == labelled.labels and by_id[plain.episode_id].labels == []


def test_the_tally_counts_flagged_steps_by_signal_and_by_minute():
    tally = Tally()
    tally.on_step(_obs("agree", "abstain"), now=1000.0)
    tally.on_step(_obs("disagree", "agree"), now=1000.0)
    tally.on_step(_obs("veto", "disagree"), now=1130.0)
    tally.on_label("clean")
    s = tally.summary(now=1130.0, steps=3)
    assert s["flagged_steps"] == 2 and s["by_verdict"] == {"disagree": 1, "veto": 1}
    assert s["by_signal"] == {"s0:disagree": 1, "s0:veto": 1, "s1:disagree": 1}
    assert s["per_minute_last_hour"][-1] == 1 and s["per_minute_last_hour"][-3] == 1 and sum(
        s["per_minute_last_hour"]) == 2
    assert s["labels"] == {"clean": 1, "reward_hack": 0, "wrong_verdict": 0, "harness_bug": 0}
    tally.on_step(_obs("disagree"), now=1130.0 + 7200)  # an hour later: the old minutes are gone
    assert sum(tally.summary(now=1130.0 + 7200, steps=4)["per_minute_last_hour"]) == 1


def test_the_review_sample_puts_flagged_unlabelled_steps_first():
    flagged = {"evaluation": {"signals": [{"name": "static_rules", "verdict": "disagree"}]}}
    calm = {"evaluation": {"signals": [{"name": "static_rules", "verdict": "agree"}]}}
    steps = [("e1", 1, calm, None), ("e1", 2, flagged, None), ("e2", 1, calm, None), ("e2", 2, flagged, "clean")]
    picked = review_sample(steps, limit=3, seed=0)
    assert [(p["episode_id"], p["step"]) for p in picked][0] == ("e1", 2)
    assert {(p["episode_id"], p["step"]) for p in picked} == {("e1", 1), ("e1", 2), ("e2", 1)}
    assert picked[0]["flagged"] == ["static_rules:disagree"]
