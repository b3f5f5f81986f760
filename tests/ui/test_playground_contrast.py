"""Every visible text of the playground's own views is readable (WCAG contrast, tests/ui/contrast.py) in
light and dark themes at 390 and 1440 px, through each verdict, the roofline panel and cost table, the
Runs list and episode view, the attack gallery and the sandbox panel; and the editor marks the line a
failure points at. Headless Chromium against the real server; screenshots in artifacts/screenshots/.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.ui.contrast import LOW_CONTRAST, OWN_VIEWS
from tests.ui.test_playground_browser import STEP_TIMEOUT_MS, play_example, shot, wait_step
# The module-scoped server (its own data dir) and Chromium fixtures of the Playground II tests.
from tests.ui.test_playground_verdicts_store import browser, data_dir, server  # noqa: F401
from tests.ui.test_playground_verdicts_store import open_page, verdict, view_shot

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api")

LOAD_FAILURE = """import torch

SCALE = {"gelu": 1.0}["silu"]


class ModelNew(torch.nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias) * SCALE
"""


def unreadable(pg, where: str) -> list[dict]:
    """Texts under 4.5:1 (3:1 when large) once the page is idle (Gradio dims pending outputs meanwhile)."""
    pg.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=STEP_TIMEOUT_MS)
    pg.wait_for_timeout(500)  # Gradio's fade-in
    result = pg.evaluate(LOW_CONTRAST, OWN_VIEWS)
    assert result["checked"] > 10, where  # it measured something
    return [dict(f, at=where) for f in result["failures"]]


def open_tab(pg, name: str) -> None:
    """A tab by name; at 390 px the last ones sit in Gradio's "More tabs" menu."""
    tab = pg.get_by_role("tab", name=name)
    if tab.count():
        tab.click()
    else:
        pg.click("#tabs .overflow-menu button")
        pg.locator("#tabs .overflow-dropdown button", has_text=name).click()


def marked(pg, view: str, want: int = 2) -> list[str]:
    """The marked gutter number and line text of ``view``, once ``want`` elements carry the mark: CodeMirror marks
    the gutter and the line in separate updates, so reading right after the first one can see only the number."""
    script = f"() => document.querySelectorAll({view!r} + ' .kp-line-error').length >= {want}"
    try:
        pg.wait_for_function(script, timeout=10_000)
    except PlaywrightTimeout:
        pass  # the assertion that follows shows what was marked
    return pg.eval_on_selector_all(f"{view} .kp-line-error", "els => els.map(e => e.textContent.trim())")


@pytest.mark.parametrize("theme, width", [("light", "1440"), ("dark", "1440"), ("light", "390"), ("dark", "390")])
def test_every_text_of_the_playground_is_readable_and_the_failing_line_is_marked(browser, server, theme, width):
    pg = open_page(browser, server, width, theme)
    bad = unreadable(pg, "page load")
    turns = pg.locator("#max-turns input[type=number]")  # four steps in one episode
    turns.fill("4")
    turns.press("Tab")
    # A hack caught by the static checks: red, and its construct's line marked in the editor.
    play_example(pg, "attack: a02_try_except_fallback (static)", 1)
    assert verdict(pg) == "hack"
    line = pg.get_attribute("#play-badges .kp-verdict", "data-line")
    assert line and f"at line {line}:" in pg.inner_text("#play-badges .kp-verdict")
    pg.wait_for_selector("#editor .cm-line.kp-line-error", timeout=10_000)
    assert marked(pg, "#editor") == [line, "try:"]
    bad += unreadable(pg, "hack")
    # Code that raises while loading: grey, "failed to load at line 3", line 3 marked; editing it clears the mark.
    pg.locator("#editor .cm-content").fill(LOAD_FAILURE)
    pg.wait_for_function("() => !document.querySelector('#editor .kp-line-error')", timeout=10_000)
    pg.click("#submit-btn")
    wait_step(pg, 2)
    assert verdict(pg) == "failed" and "failed to load at line 3" in pg.inner_text("#play-badges .kp-verdict")
    pg.wait_for_selector("#editor .cm-line.kp-line-error", timeout=10_000)
    assert marked(pg, "#editor") == ["3", 'SCALE = {"gelu": 1.0}["silu"]']
    pg.locator("#editor").scroll_into_view_if_needed()
    view_shot(pg, f"line-marker-{theme}-{width}", "#editor")
    bad += unreadable(pg, "failed to load")
    play_example(pg, "wrong: tanh_approx", 3)
    assert verdict(pg) == "wrong"
    pg.wait_for_function("() => !document.querySelector('#editor .kp-line-error')", timeout=10_000)
    bad += unreadable(pg, "wrong")
    play_example(pg, "correct: triton_fused", 4)  # green, with the timing chart, roofline panel and cost table
    assert verdict(pg) == "correct"
    bad += unreadable(pg, "correct")
    shot(pg, f"contrast-play-{theme}-{width}")
    # The runs list and a reopened episode (the step's code marks its failing line there too).
    open_tab(pg, "Runs")
    pg.wait_for_selector("#runs-table .virtual-row", timeout=30_000)
    pg.click("#runs-table [data-testid='cell-0-0']")
    pg.wait_for_selector("#runs-timeline .virtual-row >> nth=3", timeout=30_000)
    pg.click("#runs-timeline [data-testid='cell-1-0']")
    pg.wait_for_selector("#runs-badges [data-step='2']", timeout=30_000)
    pg.locator("#tab-runs").get_by_text("Code of this step").click()
    pg.wait_for_selector("#runs-code .cm-line.kp-line-error", timeout=10_000)
    assert marked(pg, "#runs-code") == ["3", 'SCALE = {"gelu": 1.0}["silu"]']
    bad += unreadable(pg, "runs")
    # The attack gallery (filled on first open, one class opened) and the sandbox panel.
    open_tab(pg, "Attacks")
    pg.wait_for_selector("#attack-gallery .kp-gallery", timeout=30_000)
    pg.locator("#attack-gallery summary").first.click()
    pg.click("#sandbox-btn")
    pg.wait_for_selector("#sandbox-panel .kp-sandbox", timeout=STEP_TIMEOUT_MS)
    bad += unreadable(pg, "attacks")
    shot(pg, f"contrast-attacks-{theme}-{width}")
    pg.context.close()
    assert bad == [], bad
