"""Playground II in headless Chromium against the real server: one verdict per step (light and dark,
390 and 1440 px), nothing lost on reload, episode links, model play that outlives its tab, Stop,
the attack gallery and the sandbox panel. Screenshots go to artifacts/screenshots/.
"""
from __future__ import annotations

import re

import pytest

from tests.support.openai_stub import OpenAIStub
from tests.support.web_server import playground_server
from tests.ui.test_playground_browser import (CHROMIUM, STEP_TIMEOUT_MS, TOKEN, choose, play_example, shot,  # noqa: F401
                                              status, timeline_rows, type_value, wait_status, wait_step)

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

VIEWPORTS = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("playground-data")


@pytest.fixture(scope="module")
def server(data_dir):
    with playground_server(KERNEL_PLAYGROUND_MODEL_TIMEOUT_S="60", HF_TOKEN="",
                           KERNEL_PLAYGROUND_DATA_DIR=str(data_dir)) as s:
        yield s.url


@pytest.fixture(scope="module")
def browser():
    from pathlib import Path
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def open_page(browser, server, width: str = "1440", theme: str = "light", query: str = "", context=None):
    ctx = context or browser.new_context(viewport=VIEWPORTS[width], accept_downloads=True,
                                         color_scheme="dark" if theme == "dark" else "light")
    pg = ctx.new_page()
    sep = "&" if query else ""
    pg.goto(f"{server}/web/?{query}{sep}__theme={theme}")
    # an ?episode= link opens on the Runs tab, which may hide Play before its button was ever visible
    pg.wait_for_selector("#runs-summary" if "episode=" in query else "#submit-btn", timeout=60_000)
    return pg


def view_shot(pg, name: str, selector: str = "") -> None:
    """What the visitor sees (the viewport, or one element), for the README's curated screenshots."""
    from tests.ui.test_playground_browser import SHOTS
    SHOTS.mkdir(parents=True, exist_ok=True)
    if selector:
        pg.locator(selector).first.screenshot(path=str(SHOTS / f"{name}.png"))
    else:
        pg.screenshot(path=str(SHOTS / f"{name}.png"))


def verdict(pg, prefix: str = "play") -> str:
    return pg.get_attribute(f"#{prefix}-badges .kp-badges", "data-verdict")


def no_sideways_scroll(pg) -> bool:
    return pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def contrast(pg, selector: str) -> float:
    """WCAG contrast ratio of the element's text colour against its own background colour."""
    return pg.evaluate("""(sel) => {
        const el = document.querySelector(sel); const cs = getComputedStyle(el);
        const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
        const lum = c => { const v = c.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                           return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
        const a = lum(rgb(cs.color)), b = lum(rgb(cs.backgroundColor));
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }""", selector)


@pytest.mark.parametrize("theme, width", [("light", "1440"), ("dark", "390")])
def test_hack_wrong_and_correct_each_get_one_verdict_everywhere(browser, server, theme, width):
    pg = open_page(browser, server, width, theme)
    if theme == "dark":
        assert pg.evaluate("document.body.classList.contains('dark')")
    # A try/except fallback: a hack, not a syntax error.
    play_example(pg, "attack: a02_try_except_fallback (static)", 1)
    assert verdict(pg) == "hack"
    title = "reward hack detected: try_except_fallback, score 0"
    assert title in status(pg) and pg.get_attribute("#play-status .kp-status", "data-kind") == "hack"
    assert pg.get_attribute("#play-badges .kp-verdict", "data-layer") == "static"
    assert "caught by the static layer" in pg.inner_text("#play-badges .kp-verdict")
    assert title in pg.inner_text("#play-step-header")
    assert pg.input_value("#play-feedback textarea").startswith(f"Verdict: {title}")
    assert "hack: try_except_fallback" in timeline_rows(pg)[0]
    assert "did not load" not in pg.inner_text("#play-badges")
    shot(pg, f"verdict-hack-{theme}-{width}")
    pg.locator("#play-step-header").scroll_into_view_if_needed()
    view_shot(pg, f"view-hack-{theme}-{width}")
    # Wrong: amber; then correct: green with the speedup.
    play_example(pg, "wrong: tanh_approx", 2)
    assert verdict(pg) == "wrong" and pg.get_attribute("#play-status .kp-status", "data-kind") == "warn"
    assert re.search(r"Step 2: wrong: \d/\d trials passed", status(pg))
    play_example(pg, "correct: torch_two_ops", 3)
    assert verdict(pg) == "correct" and pg.get_attribute("#play-status .kp-status", "data-kind") == "ok"
    assert re.search(r"Step 3: correct, \d\.\d\dx", status(pg))  # three significant digits
    rows = timeline_rows(pg)
    assert [r.split("\n")[0] for r in rows] == ["1", "2", "3"]
    assert "hack" in rows[0] and "wrong" in rows[1] and "correct" in rows[2]
    # Readable: at least 4.5:1 for the verdict banners and the status line, in both themes.
    for sel in ("#play-badges .kp-verdict", "#play-status .kp-status", "#play-badges .kp-badge"):
        assert contrast(pg, sel) >= 4.5, sel
    # Charts: SVGs drawn at fixed sizes (12 px text), axis titles, microseconds.
    assert pg.get_attribute("#timeline-plot svg:visible", "width") in ("640", "340")  # desktop or phone drawing
    assert "step" in pg.inner_text("#timeline-plot") and "score" in pg.inner_text("#timeline-plot")
    if pg.get_attribute("#play-timing-chart .kp-chart", "data-kind") == "modeled":
        assert pg.locator("#play-timing-chart .kp-whisker").count() == 0
    assert " ms" not in pg.inner_text("#play-timing-chart")
    assert no_sideways_scroll(pg)
    shot(pg, f"verdict-correct-{theme}-{width}")
    pg.context.close()


def test_call_to_action_is_above_the_fold_at_1440x900(browser, server):
    pg = open_page(browser, server, "1440")
    box = pg.locator("#demo-btn").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900
    pg.click("#demo-btn")
    wait_step(pg, 1)
    assert verdict(pg) == "correct"
    if pg.get_attribute("#play-timing-chart .kp-chart", "data-kind") == "modeled":  # CPU host: why this speedup
        why = pg.inner_text("#play-timing-chart .kp-why .kp-chart-title")
        assert re.match(r"Why this speedup: (launch|memory|compute|occupancy)-bound: ", why), why
        assert pg.locator("#play-timing-chart .kp-why tbody tr").count() >= 2  # reference and yours, per launch
        assert pg.locator("#play-timing-chart .kp-why circle").count() >= 1
    pg.wait_for_function("() => { const r = document.querySelector('#play-badges').getBoundingClientRect();"
                         " return r.top >= 0 && r.top < window.innerHeight; }", timeout=30_000)
    shot(pg, "demo-verdict-in-view")
    view_shot(pg, "view-demo-light-1440")
    if pg.locator("#play-timing-chart .kp-why").count():
        view_shot(pg, "view-why-light", "#play-timing-chart .kp-why")
    pg.context.close()


def test_reload_mid_episode_finds_everything_back_and_the_episode_goes_on(browser, server):
    pg = open_page(browser, server)
    play_example(pg, "wrong: tanh_approx", 1)
    pg.reload()
    pg.wait_for_selector("#submit-btn", timeout=60_000)
    wait_status(pg, "Welcome back")
    assert len(timeline_rows(pg)) == 1 and verdict(pg) == "wrong"
    assert "tanh" in pg.inner_text("#editor")  # the code of the last step is back in the editor
    assert "Steps 1 of 3" in pg.inner_text("#episode-summary")
    play_example(pg, "correct: torch_two_ops", 2)  # the same episode continues
    assert "Steps 2 of 3" in pg.inner_text("#episode-summary")
    pg.get_by_role("tab", name="Runs").click()
    pg.wait_for_selector("#runs-table .virtual-row", timeout=30_000)
    assert len(timeline_rows(pg, "runs-table")) == 1
    shot(pg, "runs")
    pg.context.close()


def test_an_episode_link_opens_read_only_in_another_browser(browser, server):
    pg = open_page(browser, server)
    play_example(pg, "correct: torch_two_ops", 1)
    pg.get_by_role("tab", name="Runs").click()
    pg.click("#runs-table [data-testid='cell-0-0']")
    wait_status(pg, "Reopened gelu_bias", "runs-status")
    link = pg.input_value("#runs-link input, #runs-link textarea")
    assert re.fullmatch(re.escape(server) + r"/web/\?episode=[0-9a-f]{32}", link)  # the whole address, to paste
    other = open_page(browser, server, theme="dark", query=link.split("?", 1)[1])  # a fresh context: another browser
    wait_status(other, "Shared episode", "runs-status")
    assert "read-only (shared link)" in other.inner_text("#runs-summary")
    assert len(timeline_rows(other, "runs-timeline")) == 1 and verdict(other, "runs") == "correct"
    assert timeline_rows(other, "runs-table") == []  # the other browser's own runs: none
    assert timeline_rows(other) == []  # and nothing of the first browser in its Play tab
    shot(other, "episode-link")
    view_shot(other, "view-episode-link-dark")
    for p in (pg, other):
        p.context.close()


def test_model_auto_play_goes_on_when_the_tab_closes_and_the_page_follows_it_again(browser, server, data_dir):
    with OpenAIStub(timeout_s=120) as stub:
        pg = open_page(browser, server)
        context = pg.context
        type_value(pg, "base-url", stub.base_url)
        type_value(pg, "model-id", "policy/gated")
        type_value(pg, "token", TOKEN)
        type_value(pg, "max-turns", "2")
        pg.click("#autoplay-btn")
        wait_status(pg, "writing step 1")
        pg.close()  # the tab closes while the model is thinking
        stub.gate.set()
        back = open_page(browser, server, context=context)  # the same browser comes back
        wait_status(back, "episode over")
        assert len(timeline_rows(back)) == 2
        assert TOKEN not in back.content()
        stored = b"".join(p.read_bytes() for p in data_dir.iterdir() if p.is_file())
        assert b"policy/gated" in stored and TOKEN.encode() not in stored  # stored, and never the token
        shot(back, "autoplay-after-reopen")
        context.close()


def test_stop_discards_the_pending_model_reply_and_it_never_lands(browser, server):
    with OpenAIStub(timeout_s=120) as stub:
        pg = open_page(browser, server)
        type_value(pg, "base-url", stub.base_url)
        type_value(pg, "model-id", "policy/gated")
        type_value(pg, "token", TOKEN)
        pg.click("#model-step-btn")
        wait_status(pg, "writing step 1")
        pg.click("#stop-btn")
        wait_status(pg, "pending reply was discarded, no turn used")
        stub.gate.set()  # the model answers now, after Stop
        assert stub.answered_event.wait(120) and stub.answered == 1
        play_example(pg, "correct: torch_two_ops", 1)  # the next step is step 1: nothing landed
        assert len(timeline_rows(pg)) == 1 and "Steps 1 of 3" in pg.inner_text("#episode-summary")
        pg.context.close()


def test_attack_gallery_lists_every_attack_and_loads_one_into_play(browser, server):
    from ui import gallery
    pg = open_page(browser, server)
    pg.get_by_role("tab", name="Attacks").click()
    assert int(pg.get_attribute("#attack-gallery .kp-gallery", "data-attacks")) == len(gallery.attacks()) >= 80
    assert pg.locator("#attack-gallery tr[data-attack='a07_decoy_kernel']").count() == 1
    # It opens on a one-line summary, plain class titles and a caught hack (not a harmless attack) selected.
    counts = gallery.summary(gallery.attacks())
    line = pg.inner_text("#attack-gallery .kp-gallery-summary")
    assert re.match(rf"{counts['attacks']} attacks: {counts['caught']} caught .*· {counts['harmless']} harmless "
                    rf".*· {counts['open']} open", line), line
    assert counts["caught"] > 0 and counts["harmless"] > 0
    assert "caught by" in pg.input_value("#attack-select input")
    selected = pg.locator("#attack-gallery details[open] tr[data-verdict='caught']")
    assert selected.count() >= 1
    headings = [h.inner_text() for h in pg.locator("#attack-gallery summary").all()]
    assert headings and all(len(h) < 70 and not re.search(r"issue|red ?team|review|since|\bnow\b", h, re.I)
                            for h in headings), headings
    harmless = pg.locator("#attack-gallery tr[data-verdict='harmless']").first.text_content()
    assert "harmless: earns no more than honest work" in harmless
    choose(pg, "attack-select", "a07_decoy_kernel — silu_mul, caught by runtime-check")
    pg.click("#attack-load-btn")
    wait_status(pg, "Loaded attack a07_decoy_kernel")
    assert "silu_mul" in pg.input_value("#task input")
    pg.click("#submit-btn")
    wait_step(pg, 1)
    assert verdict(pg) == "hack"
    assert "reward hack detected: decoy_kernel, score 0" in status(pg)
    assert pg.get_attribute("#play-badges .kp-verdict", "data-layer") in ("runtime-check", "replay")
    shot(pg, "verdict-decoy")
    pg.get_by_role("tab", name="Attacks").click()
    pg.click("#sandbox-btn")
    pg.wait_for_selector("#sandbox-panel .kp-sandbox", timeout=STEP_TIMEOUT_MS)
    assert pg.locator("#sandbox-panel li[data-layer='seccomp']").count() == 1
    shot(pg, "attacks")
    pg.context.close()


def test_compare_three_players_ranks_them_diffs_their_code_and_fills_the_leaderboard(browser, server):
    with OpenAIStub(timeout_s=30) as stub:
        pg = open_page(browser, server)
        play_example(pg, "wrong: tanh_approx", 1)
        play_example(pg, "correct: torch_two_ops", 2)
        type_value(pg, "base-url", stub.base_url)
        type_value(pg, "token", TOKEN)
        type_value(pg, "max-turns", "2")
        pg.get_by_role("tab", name="Compare").click()
        type_value(pg, "compare-b", "policy/correct")
        type_value(pg, "compare-c", "policy/broken")
        pg.click("#compare-run-btn")
        wait_status(pg, "Comparison finished", "compare-status")
        assert pg.locator("#compare-plot svg:visible polyline").count() == 3  # (the phone drawing is hidden)
        ranking = pg.inner_text("#compare-winner")
        assert pg.get_attribute("#compare-winner .kp-winner", "data-winner") == "B: policy/correct", ranking
        assert ranking.index("B: policy/correct") < ranking.index("C: policy/broken")
        assert "Wrong on purpose" in pg.inner_text("#compare-code-c")
        pg.get_by_text("Diff of the best code").click()
        assert "+++ C: policy/broken" in pg.inner_text("#compare-diff")
        board = timeline_rows(pg, "compare-leaderboard")
        assert any("policy/correct" in r for r in board) and any("person" in r for r in board)
        assert [r.split("\n")[0] for r in board][:3] == ["1", "2", "3"]
        shot(pg, "compare-three")
        # Step diffs: the second Play step against the first.
        pg.get_by_role("tab", name="Play", exact=True).click()
        pg.get_by_text("Diff from the previous step").click()
        assert "--- previous step" in pg.inner_text("#play-diff")
        pg.context.close()


def test_the_three_minute_tour_plays_correct_wrong_hack_then_the_model_scrolling_to_each_verdict(browser, server):
    with OpenAIStub(timeout_s=30) as stub:
        pg = open_page(browser, server)
        box = pg.locator("#tour-btn").bounding_box()
        assert box is not None and box["y"] + box["height"] <= 900  # above the fold at 1440x900
        type_value(pg, "base-url", stub.base_url)
        type_value(pg, "model-id", "policy/correct")
        type_value(pg, "token", TOKEN)
        pg.evaluate("""() => { window.kpSeen = []; new MutationObserver(() => {
            const b = document.querySelector('#play-badges .kp-badges[data-step]');
            if (b && !window.kpSeen.some(s => s[0] === b.dataset.step)) window.kpSeen.push([b.dataset.step, b.dataset.verdict]);
          }).observe(document.body, {subtree: true, childList: true, attributes: true}); }""")
        pg.click("#tour-btn")
        wait_status(pg, "Tour 4/4, the model policy/correct")
        rows = timeline_rows(pg)
        assert len(rows) == 4 and "Steps 4 of 4" in pg.inner_text("#episode-summary")
        assert "correct" in rows[0] and "wrong" in rows[1] and "hack" in rows[2] and "correct" in rows[3]
        # the verdict that landed last is in view: the page scrolls to each one as it lands
        pg.wait_for_function("() => { const r = document.querySelector('#play-badges').getBoundingClientRect();"
                             " return r.top >= 0 && r.top < window.innerHeight; }", timeout=30_000)
        assert [s[1] for s in pg.evaluate("window.kpSeen")][:4] == ["correct", "wrong", "hack", "correct"]
        shot(pg, "tour")
        pg.context.close()
