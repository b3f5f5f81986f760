"""The playground never loses a visitor's work or settings and never claims more than happened, in
headless Chromium against the real server: the task changes only when its value changes (edited code
is kept per task), model settings survive a reload, a Compare whose player could not play does not end
green, and the sandbox panel lists only the layers applied to the candidate.
"""
from __future__ import annotations

import pytest

# The module's real server, the OpenAI stub, Chromium and a fresh page per test, as in the main browser tests.
from tests.ui.test_playground_browser import browser, choose, page, server, stub, type_value  # noqa: F401
from tests.ui.test_playground_browser import wait_status
from ui.play_model import PREFS_KEY

pytestmark = pytest.mark.browser
STEP_TIMEOUT_MS = 180_000  # the first evaluation waits for a warm worker on a loaded host
SETTLE_MS = 4_000  # long enough for a round trip the page should not have made


def editor_text(pg) -> str:
    return pg.inner_text("#editor .cm-content")


def edit_editor(pg, line: str) -> None:
    pg.click("#editor .cm-content")
    pg.keyboard.press("Control+End")
    pg.keyboard.type("\n" + line)


def test_the_task_changes_only_when_its_value_does_and_edited_code_is_kept_per_task(page):
    choose(page, "example-select", "wrong: tanh_approx")
    page.click("#load-example-btn")
    wait_status(page, "Loaded")
    page.click("#submit-btn")
    page.wait_for_selector("#play-badges [data-step='1']", timeout=STEP_TIMEOUT_MS)
    edit_editor(page, "# my edit 42")
    # Open the Task list and click elsewhere without choosing: nothing may change.
    page.click("#task input")
    page.wait_for_selector("[role=option]", timeout=10_000)
    page.click("#kp-header")
    page.wait_for_timeout(SETTLE_MS)
    assert "# my edit 42" in editor_text(page)
    assert page.locator("#play-badges [data-step='1']").count() == 1  # the episode view is still there
    # Tab through the Task list: nothing may change either.
    page.focus("#task input")
    page.keyboard.press("Tab")
    page.wait_for_timeout(SETTLE_MS)
    assert "# my edit 42" in editor_text(page)
    assert "starting template" not in page.inner_text("#play-status")
    assert page.locator("#play-badges [data-step='1']").count() == 1
    # A real change shows the other task; coming back brings the edited code back.
    page.click("#task input")
    page.locator("[role=option]", has_text="softmax").first.click()
    wait_status(page, "softmax: the editor holds")
    assert "# my edit 42" not in editor_text(page)
    page.click("#task input")
    page.locator("[role=option]", has_text="gelu_bias").first.click()
    wait_status(page, "gelu_bias: the editor holds the code you last edited")
    assert "# my edit 42" in editor_text(page)


def stored_setting(pg, elem_id: str, value: str) -> None:
    """Type a model setting and wait until the browser's storage holds it (the page stores each change itself, in
    order; a reload right after the last keystroke could come before its save)."""
    before = pg.evaluate("key => localStorage.getItem(key)", PREFS_KEY)
    type_value(pg, elem_id, value)
    pg.wait_for_function("([key, before]) => localStorage.getItem(key) !== before", arg=[PREFS_KEY, before],
                         timeout=30_000)


def test_model_settings_survive_a_reload_and_a_compare_whose_players_could_not_play_is_not_green(page, server,
                                                                                                 stub):
    for elem, value in (("base-url", stub.base_url), ("model-id", "policy/error"), ("temperature", "0.7"),
                        ("max-tokens", "1500")):
        stored_setting(page, elem, value)
    type_value(page, "max-turns", "1")
    page.reload()
    page.wait_for_selector("#submit-btn", timeout=60_000)
    page.wait_for_function(
        "url => (document.querySelector('#base-url input, #base-url textarea') || {}).value === url",
        arg=stub.base_url, timeout=30_000)
    assert page.input_value("#model-id input") == "policy/error"
    assert float(page.input_value("#temperature input")) == pytest.approx(0.7)
    assert page.input_value("#max-tokens input") == "1500"
    page.get_by_role("tab", name="Compare").click()
    type_value(page, "compare-a", "policy/error")
    type_value(page, "compare-b", "policy/prose")
    page.click("#compare-run-btn")
    page.wait_for_function(
        "() => { const s = document.querySelector('#compare-status .kp-status');"
        " return s && !['busy', 'info'].includes(s.dataset.kind); }",
        timeout=STEP_TIMEOUT_MS)
    text = page.inner_text("#compare-status")
    assert page.get_attribute("#compare-status .kp-status", "data-kind") in ("warn", "error"), text
    assert "HTTP 500" in text and "no code block" in text, text
    chat = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert chat and chat[-1]["body"]["temperature"] == pytest.approx(0.7) and chat[-1]["body"]["max_tokens"] == 1500


def test_the_sandbox_panel_lists_only_the_layers_applied_to_the_candidate(page):
    page.get_by_role("tab", name="Attacks").click()
    page.click("#sandbox-btn")
    page.wait_for_selector("#sandbox-panel li", timeout=120_000)
    items = page.locator("#sandbox-panel li[data-layer]").all()
    assert items and all(li.get_attribute("data-on") == "true" for li in items)
    layers = {li.get_attribute("data-layer") for li in items}
    assert "user_namespaces" not in layers and layers <= {"landlock", "seccomp", "rlimits", "audit_hook"}
    assert "server's identity" not in page.inner_text("#sandbox-panel")


def test_ctrl_enter_submits_and_the_api_tab_shows_this_servers_address_task_and_install_line(page, server):
    page.click("#editor .cm-content")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.press("Control+Enter")
    wait_status(page, "the editor is empty", timeout_ms=60_000)  # the submission was sent (and refused)
    page.get_by_role("tab", name="API").click()
    text = page.inner_text("#api-snippet")
    assert f'base_url="{server}"' in text and 'task_id="gelu_bias"' in text and "pip install" in text


def test_the_tour_checks_for_a_model_first_and_says_what_it_needs_next_to_the_steps(page):
    # No token anywhere (the server's HF_TOKEN is empty): the default router cannot be used.
    page.click("#tour-btn")
    text = wait_status(page, "Tour 4/4 needs a model")
    assert page.get_attribute("#play-status .kp-status", "data-kind") == "warn"
    assert "needs a token" in text and "Model player" in text
    assert "Tour 4/4 needs a model" in page.inner_text("#play-progress")  # next to the steps, not only on top
    rows = page.locator("#timeline .virtual-row").all()
    assert len(rows) == 3  # correct, wrong, the hack: no failed model step
    page.wait_for_function("() => { const r = document.querySelector('#play-progress').getBoundingClientRect();"
                           " return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }", timeout=30_000)
