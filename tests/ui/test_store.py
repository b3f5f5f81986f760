"""The server-side episode store: per-browser runs, links, retention and no tokens, on a real SQLite file."""
from __future__ import annotations

import sqlite3

import pytest

from environment.trajectory import EpisodeRecord, StepRecord
from ui import store as S

TOKEN = "hf_StoreTestToken0123456789abcdefXYZ"


def record(task: str = "gelu_bias", steps: int = 1, reply: str = "ok", flags=()) -> EpisodeRecord:
    r = EpisodeRecord(task_id=task, seed=3, player="model", model="m", max_turns=3)
    for n in range(1, steps + 1):
        r.add_step(StepRecord(step=n, code="class ModelNew: pass", reward=0.5, raw_reply=reply,
                              observation={"correct": True, "flags": list(flags)}))
    return r


def test_runs_are_per_browser_and_a_link_opens_any_episode(tmp_path):
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    mine, theirs = record(), record("softmax")
    store.save("browser-aaaaaaaa", mine)
    store.save("browser-bbbbbbbb", theirs)
    assert [r.episode_id for r in store.runs("browser-aaaaaaaa")] == [mine.episode_id]
    assert store.get(theirs.episode_id).task_id == "softmax"  # the id is the capability
    mine.add_step(StepRecord(step=2, code="x", reward=0.9, observation={"correct": True}))
    store.save("browser-aaaaaaaa", mine)  # an update, not a second run
    runs = store.runs("browser-aaaaaaaa")
    assert len(runs) == 1 and runs[0].steps == 2 and runs[0].score == pytest.approx(0.9)
    store.save("browser-bbbbbbbb", mine)  # another browser cannot take over an episode
    assert [r.episode_id for r in store.runs("browser-bbbbbbbb")] == [theirs.episode_id]
    assert [r.task_id for r in store.records("browser-aaaaaaaa")] == ["gelu_bias"]


def test_tokens_never_reach_the_file(tmp_path):
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    store.save("browser-aaaaaaaa", record(reply=f"my key is {TOKEN}"))
    raw = (tmp_path / "e.sqlite3").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("e.sqlite3-*"))
    assert TOKEN.encode() not in raw and b"[REDACTED]" in raw


def test_retention_keeps_the_newest_episodes_per_browser_and_drops_old_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "MAX_EPISODES", 3)
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    saved = [record() for _ in range(5)]
    for r in saved:
        store.save("browser-aaaaaaaa", r)
    assert {r.episode_id for r in store.runs("browser-aaaaaaaa")} == {r.episode_id for r in saved[2:]}
    db = sqlite3.connect(tmp_path / "e.sqlite3")
    db.execute("UPDATE episodes SET updated_at = 0")
    db.commit()
    store.save("browser-bbbbbbbb", record())
    assert store.runs("browser-aaaaaaaa") == []  # older than the retention period


def test_bad_ids_oversized_records_and_unknown_episodes_get_clear_errors(tmp_path, monkeypatch):
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    with pytest.raises(S.StoreError, match="not an episode id"):
        store.get("../../etc/passwd")
    with pytest.raises(S.StoreError, match="no stored episode"):
        store.get("0" * 32)
    with pytest.raises(S.StoreError, match="no valid id"):
        store.save("", record())
    monkeypatch.setattr(S, "MAX_RECORD_BYTES", 100)
    with pytest.raises(S.StoreError, match="larger than .* export it"):
        store.save("browser-aaaaaaaa", record())


def test_hacks_are_counted_and_runs_survive_a_restart(tmp_path):
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    store.save("browser-aaaaaaaa", record(steps=2, flags=["decoy_kernel"]))
    assert store.runs("browser-aaaaaaaa")[0].hacks == 2
    assert S.EpisodeStore(tmp_path / "e.sqlite3").runs("browser-aaaaaaaa")[0].steps == 2


def test_data_dir_comes_from_the_environment_or_a_writable_default(tmp_path, monkeypatch):
    monkeypatch.setenv(S.DATA_DIR_VAR, str(tmp_path / "d"))
    assert S.data_dir() == tmp_path / "d"
    monkeypatch.delenv(S.DATA_DIR_VAR)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    monkeypatch.setenv("XDG_DATA_HOME", str(ro / "sub"))
    try:
        import os
        if os.geteuid() == 0:
            pytest.skip("root can write anywhere")
        assert str(S.data_dir()).startswith(__import__("tempfile").gettempdir())
    finally:
        ro.chmod(0o700)


def test_an_auto_play_running_in_another_process_is_interrupted_and_its_mark_holds_no_token(tmp_path, monkeypatch):
    store = S.EpisodeStore(tmp_path / "e.sqlite3")
    mine, gone = record(), record()
    store.save("browser-aaaaaaaa", mine)
    settings = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "temperature": 0.2, "max_tokens": 64}
    store.autoplay_started("browser-aaaaaaaa", mine.episode_id, settings)
    store.autoplay_started("browser-aaaaaaaa", gone.episode_id, settings)  # an episode the store no longer has
    assert store.interrupted("browser-aaaaaaaa") == {}  # running here, in this process
    with pytest.raises(S.StoreError):
        store.autoplay_started("browser-aaaaaaaa", mine.episode_id, {**settings, "api_token": TOKEN})
    monkeypatch.setattr(S, "BOOT", "another-process")  # what the next server process sees
    assert store.interrupted("browser-aaaaaaaa") == {mine.episode_id: settings}
    assert store.interrupted("browser-bbbbbbbb") == {}
    store.autoplay_ended(mine.episode_id)
    assert store.interrupted("browser-aaaaaaaa") == {}
    raw = (tmp_path / "e.sqlite3").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("e.sqlite3-*"))
    assert TOKEN.encode() not in raw
