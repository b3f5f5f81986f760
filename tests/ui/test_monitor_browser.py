"""The Monitor view in headless Chromium: a server with KERNEL_ENV_MONITOR=1 and a token, episodes played
by other sessions over the WebSocket (a correct one and a hack), then the view's summaries, the
episode table, and an episode opened in the step inspector. The token is asked for, never served."""
from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from environment.client import KernelEnv
from environment.models import KernelAction
from environment.tasks import get_task
from tests.support.web_server import playground_server

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"  # git-ignored; CI uploads them
CHROMIUM = "/usr/bin/chromium"
TOKEN = "monitor-browser-token-8d1e44"
HACK = ROOT / "tests" / "redteam" / "attacks" / "a02_try_except_fallback.py"  # gelu_bias, try_except_fallback


def play(url: str, code: str) -> str:
    with KernelEnv(base_url=url, message_timeout_s=600).sync() as env:
        env.reset(task_id="gelu_bias", seed=2, max_turns=2)
        env.step(KernelAction(code=code))
        return env.state().episode_id


@pytest.fixture(scope="module")
def server():
    with playground_server(KERNEL_ENV_MONITOR="1", KERNEL_ENV_MONITOR_TOKEN=TOKEN) as s:
        yield s


@pytest.fixture(scope="module")
def page(server):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium")
    correct = next(f for f in get_task("gelu_bias").solutions["correct"] if f.name == "torch_two_ops.py").read_text()
    server.episodes = {"correct": play(server.url, correct), "hack": play(server.url, HACK.read_text())}
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        pg = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        pg.goto(server.url + "/web/")
        pg.get_by_role("tab", name="Monitor").click()
        pg.wait_for_selector("#monitor-refresh", timeout=60_000)
        yield pg
        browser.close()


def wait_status(pg, text: str) -> str:
    pg.wait_for_selector(f"#monitor-status:has-text('{text}')", timeout=120_000)
    return pg.inner_text("#monitor-status")


def test_monitor_view_needs_the_token_then_shows_every_sessions_episodes(page, server):
    page.click("#monitor-refresh")
    assert "type the monitor token" in wait_status(page, "monitor token")
    page.locator("#monitor-token input").fill(TOKEN)
    page.click("#monitor-refresh")
    assert "2 episode(s) shown of 2 kept" in wait_status(page, "episode(s) shown")
    cards = page.inner_text("#monitor-cards")
    assert "success rate\n50%" in cards and "hack rate\n50%" in cards
    assert "try_except_fallback" in page.inner_text("#monitor-flags")
    assert page.locator("#monitor-tasks tr[data-task='gelu_bias']").count() == 1
    rows = [r.inner_text() for r in page.locator("#monitor-episodes .virtual-row").all()]
    assert len(rows) == 2 and any(server.episodes["hack"] in r for r in rows)


def test_an_episode_opens_in_the_step_inspector(page, server):
    hack = server.episodes["hack"]
    page.click("#monitor-episode input")
    page.get_by_role("option", name=f"gelu_bias · {hack[:8]} · reward 0.0").click()
    wait_status(page, f"Episode {hack[:8]} on gelu_bias")
    page.wait_for_selector("#monitor-flags:has-text('try_except_fallback')", timeout=30_000)
    assert "Step 1" in page.inner_text("#monitor-step-header")
    page.locator("#tab-monitor").get_by_text("Code of this step").click()
    page.wait_for_selector("#monitor-code:has-text('broken_kernel')", timeout=30_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "monitor.png"), full_page=True)


def test_the_token_is_never_in_what_the_server_serves(server):
    for path in ("/web/", "/web/config", "/web/gradio_api/info"):
        try:
            with urllib.request.urlopen(server.url + path, timeout=60) as r:
                assert TOKEN not in r.read().decode("utf-8", "replace"), path
        except urllib.error.HTTPError:
            pass  # a route this Gradio version does not serve
    assert TOKEN not in server.log_tail(10**7)
