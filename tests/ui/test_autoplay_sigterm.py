"""A server stopped with SIGTERM (what a Space restart sends) while a model auto-plays, in headless
Chromium: the server exits by itself, the step it could not run is no step (no 0.0 charged to the
model, in the store or the export), and after the restart the episode is interrupted and continues.

The stub model is gated (tests/support/openai_stub.py): step 1 is answered, then the server gets
SIGTERM while the model is writing step 2, and only then does the model answer step 2.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from environment.local_server import free_port
from tests.ui.test_autoplay_restart import (STEP_TIMEOUT_MS, auto_play_until_step_2_is_asked, playground_on,
                                            stub_and_page, type_value, wait_status)

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

TOKEN = "hf_SigtermTestToken0123456789abcdefXYZ"
EXIT_BOUND_S = 120  # generous: the server must exit by itself, not be killed


def stored(data_dir: Path) -> tuple[list[dict], int]:
    """The stored records (as exported) and how many auto-plays are still marked."""
    with contextlib.closing(sqlite3.connect(data_dir / "episodes.sqlite3")) as db:
        records = [json.loads(r[0]) for r in db.execute("SELECT record FROM episodes")]
        marks = db.execute("SELECT COUNT(*) FROM autoplay").fetchone()[0]
    return records, marks


def test_sigterm_during_auto_play_stores_no_failed_step_exits_and_the_episode_continues_after_restart(tmp_path):
    data, port = tmp_path / "data", free_port()
    with stub_and_page() as (stub, pg):
        with playground_on(port, data) as first:
            auto_play_until_step_2_is_asked(pg, first.url, stub, TOKEN)
            os.kill(first.proc.pid, signal.SIGTERM)  # the server process only, as a container stop sends it
            stub.release(1)  # the model answers step 2 while the server is going away
            try:
                first.proc.wait(timeout=EXIT_BOUND_S)  # with the page still open and following the job
            except subprocess.TimeoutExpired:
                pytest.fail(f"the server was still running {EXIT_BOUND_S} s after SIGTERM: {first.log_tail()}")
            [record], marks = stored(data)
            assert [s["step"] for s in record["steps"]] == [1] and len(record["rewards"]) == 1
            assert record["rewards"][0] and record["rewards"][0] > 0  # step 1 was correct; nothing else stored
            assert not [s for s in record["steps"] if "environment step failed" in (s["error"] or "")]
            assert marks == 1  # the auto-play is still marked: the next process offers Continue
        with playground_on(port, data) as second:
            pg.goto(second.url + "/web/")  # the same browser id (localStorage, same origin)
            text = wait_status(pg, "interrupted by a server restart", timeout_ms=60_000)
            assert "after 1 of 3 turn(s)" in text
            assert pg.is_visible("#continue-btn")
            type_value(pg, "token", TOKEN)
            stub.gate.set()
            pg.click("#continue-btn")
            pg.wait_for_selector("#play-badges [data-step='3']", timeout=STEP_TIMEOUT_MS)
            wait_status(pg, "episode over")
            # The export: every step ran and was scored; no 0.0 booked for the step SIGTERM cut off.
            pg.get_by_role("tab", name="Export").click()
            pg.click("#export-btn")
            pg.wait_for_selector("#export-status :text('ready')", timeout=60_000)
            with pg.expect_download() as download:
                pg.click("#download-jsonl")
            rows = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines() if line]
    [row] = rows
    assert row["episode_id"] == record["episode_id"] and [s["step"] for s in row["steps"]] == [1, 2, 3]
    assert all(r is not None and r > 0 for r in row["rewards"]), row["rewards"]
    assert stored(data)[1] == 0
