"""Model auto-play across a server restart, in headless Chromium: the episode a restart cut off is
shown as interrupted (Play and Runs) and continues, the same episode, with the token entered again.

The stub model is gated (tests/support/openai_stub.py): it answers only as the test lets it, so the
restart lands while the model is writing step 2, whatever the host's speed.
"""
from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Iterator

import pytest

from environment.local_server import LocalServer, free_port
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
TOKEN = "hf_RestartTestToken0123456789abcdefXYZ"
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
STEP_TIMEOUT_MS = 180_000  # the first evaluation waits for a warm worker on a loaded host


@contextlib.contextmanager
def playground_on(port: int, data_dir: Path) -> Iterator[LocalServer]:
    """The playground server on ``port`` (the same origin after the restart: the browser keeps its id
    in localStorage, which is per origin) with its store in ``data_dir``."""
    env = {"ENABLE_WEB_INTERFACE": "true", "HF_TOKEN": "", "KERNEL_PLAYGROUND_DATA_DIR": str(data_dir),
           "KERNEL_PLAYGROUND_MODEL_TIMEOUT_S": "120"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        server = LocalServer(start_timeout_s=240)
        server.port, server.url = port, f"http://127.0.0.1:{port}"
        server.start()
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    try:
        yield server
    finally:
        server.stop()


def shot(pg, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def type_value(pg, elem_id: str, value: str) -> None:
    box = pg.locator(f"#{elem_id} input, #{elem_id} textarea").first
    box.fill(value)
    box.press("Tab")


def wait_status(pg, pattern: str, timeout_ms: int = STEP_TIMEOUT_MS) -> str:
    pg.wait_for_function(
        "pat => new RegExp(pat, 'i').test(document.querySelector('#play-status')?.innerText || '')",
        arg=pattern, timeout=timeout_ms)
    return pg.inner_text("#play-status")


def wait_until(condition, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def stored(data_dir: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(data_dir / "episodes.sqlite3")) as db:
        return db.execute("SELECT episode_id, task_id, seed, steps, max_turns, model FROM episodes").fetchall()


@contextlib.contextmanager
def stub_and_page() -> Iterator[tuple[OpenAIStub, object]]:
    """The gated stub model and one page of headless Chromium (one browser context: one browser id)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium")
    with OpenAIStub(timeout_s=150) as stub, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        yield stub, browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True).new_page()
        browser.close()


def auto_play_until_step_2_is_asked(pg, url: str, stub: OpenAIStub, token: str, seed: str = "0") -> None:
    """Open the playground at ``url``, auto-play the gated stub model; return once step 1 is shown and
    the model is writing step 2."""
    pg.goto(url + "/web/")
    pg.wait_for_selector("#autoplay-btn", timeout=60_000)
    type_value(pg, "base-url", stub.base_url)
    type_value(pg, "model-id", "policy/gated")
    type_value(pg, "token", token)
    type_value(pg, "seed", seed)
    stub.release(1)  # step 1 only
    pg.click("#autoplay-btn")
    pg.wait_for_selector("#play-badges [data-step='1']", timeout=STEP_TIMEOUT_MS)
    wait_until(lambda: len(stub.requests) >= 2)


def test_an_auto_play_cut_off_by_a_restart_is_shown_interrupted_and_continues_the_same_episode(tmp_path):
    data, port = tmp_path / "data", free_port()
    with stub_and_page() as (stub, pg):
        with playground_on(port, data) as first:
            auto_play_until_step_2_is_asked(pg, first.url, stub, TOKEN, seed="7")
            [(episode_id, task, seed, steps, max_turns, model)] = stored(data)
            assert (seed, steps, max_turns, model) == (7, 1, 3, "policy/gated")
        # The server is gone mid-episode; a new one starts on the same data dir and port.
        with playground_on(port, data) as second:
            pg.goto(second.url + "/web/")  # the same browser context: the same browser id
            text = wait_status(pg, "interrupted by a server restart", timeout_ms=60_000)
            assert "after 1 of 3 turn(s)" in text and "enter your token again" in text
            assert pg.is_visible("#continue-btn")
            assert pg.input_value("#model-id input") == "policy/gated"
            assert pg.input_value("#base-url input, #base-url textarea") == stub.base_url
            assert pg.locator("#play-badges [data-step='1']").count() == 1
            assert TOKEN not in pg.content()
            shot(pg, "autoplay-interrupted-light")
            pg.get_by_role("tab", name="Runs", exact=True).click()
            pg.wait_for_selector("#runs-table .virtual-row", timeout=30_000)
            assert "interrupted by a server restart" in pg.inner_text("#runs-table")
            pg.get_by_role("tab", name="Play", exact=True).click()

            type_value(pg, "token", TOKEN)  # tokens are never stored: the visitor enters it again
            before = len(stub.requests)
            stub.gate.set()
            pg.click("#continue-btn")
            pg.wait_for_selector("#play-badges [data-step='3']", timeout=STEP_TIMEOUT_MS)
            wait_status(pg, "episode over")
            assert not pg.is_visible("#continue-btn")
            assert TOKEN not in pg.content()
            sent = stub.requests[before:]
            assert sent and {r["headers"].get("authorization") for r in sent} == {f"Bearer {TOKEN}"}
            # The step-2 prompt goes on from the stored step 1: its feedback and code are in it.
            prompt = sent[0]["body"]["messages"][1]["content"]
            assert "submission 2 of 3" in prompt and "Your best submission so far" in prompt
    # The same episode, grown to the end; the token is in none of the store's files.
    assert stored(data) == [(episode_id, task, 7, 3, 3, "policy/gated")]
    with contextlib.closing(sqlite3.connect(data / "episodes.sqlite3")) as db:
        record = db.execute("SELECT record FROM episodes").fetchone()[0]
        assert db.execute("SELECT COUNT(*) FROM autoplay").fetchone() == (0,)
    steps = json.loads(record)["steps"]
    assert [s["step"] for s in steps] == [1, 2, 3] and [s["observation"]["turn"] for s in steps] == [1, 2, 3]
    files = [f for f in data.rglob("*") if f.is_file()]
    assert files and not [f.name for f in files if TOKEN.encode() in f.read_bytes()]
