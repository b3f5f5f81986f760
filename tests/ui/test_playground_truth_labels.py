"""Every modeled speedup says how well the model tracks a real H100, charts stay legible on a phone,
code panes' line numbers stay level with their lines, Compare fits a 1440 px screen, and a harmless
attack is labelled harmless wherever it is shown: in headless Chromium against the real server."""
from __future__ import annotations

import re

import pytest

# The module's real server, the OpenAI stub, Chromium and a fresh page per test, as in the main browser tests.
from tests.ui.test_playground_browser import browser, page, server, stub  # noqa: F401
from tests.ui.test_playground_browser import choose, compare_you_against_broken_model, play_example, wait_status

pytestmark = pytest.mark.browser
CHARTS = ("#play-timing-chart", "#play-breakdown-chart", "#timeline-plot")

# The rendered size of every visible chart text: its CSS font size times the SVG's scale (drawn / viewBox).
TEXT_PX = """(sels) => {
  const out = [];
  for (const sel of sels) for (const t of document.querySelectorAll(sel + ' svg text')) {
    if (!t.getClientRects().length) continue;
    const svg = t.ownerSVGElement, vb = svg.viewBox.baseVal;
    const scale = svg.getBoundingClientRect().width / vb.width;
    out.push([sel, t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]);
  }
  return out;
}"""

# Each of the first lines of a code view against its line number: [line's top, number's top] in px.
GUTTER = """(sel) => {
  const ed = document.querySelector(sel + ' .cm-editor');
  const g = [...ed.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].filter(e => e.style.visibility !== 'hidden');
  const l = [...ed.querySelectorAll('.cm-content > .cm-line')];
  return l.slice(0, Math.min(12, g.length)).map((x, i) => [x.getBoundingClientRect().top,
                                                           g[i].getBoundingClientRect().top]);
}"""


def test_each_modeled_speedup_links_the_models_h100_fidelity_and_charts_stay_legible_at_390px(page):
    play_example(page, "correct: torch_two_ops", 1)
    if page.get_attribute("#play-timing-chart .kp-chart", "data-kind") != "modeled":
        pytest.skip("this host measures the speedup (a GPU): nothing is modeled")
    # The verdict banner, the Why-this-speedup panel and the cost table each carry the note.
    for where in ("#play-badges .kp-verdict", "#play-timing-chart .kp-why", "#play-timing-chart .kp-chart"):
        assert page.locator(f"{where} > .kp-fidelity").count() == 1, where
    note = page.locator("#play-badges .kp-verdict > .kp-fidelity")
    assert "Modeled, not measured" in note.inner_text()
    note.locator("summary").click()
    text = note.inner_text()
    assert "Spearman 0.794" in text and "no GPU ran it" in text and "ranking, not a time" in text
    assert page.locator("#play-timing-chart .kp-why > .kp-fidelity p").is_visible() is False  # collapsed

    desktop = page.evaluate(TEXT_PX, list(CHARTS))
    assert desktop and min(px for _, _, px in desktop) >= 11, min(desktop, key=lambda r: r[2])
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)
    phone = page.evaluate(TEXT_PX, list(CHARTS))
    assert {sel for sel, _, _ in phone} == {sel for sel, _, _ in desktop}  # every chart still shows its text
    assert min(px for _, _, px in phone) >= 11, min(phone, key=lambda r: r[2])
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_compare_fits_1440px_and_best_code_line_numbers_stay_level_with_their_lines(page, stub):
    compare_you_against_broken_model(page, stub)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    box = page.locator("#compare-run-btn").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1440
    for side in ("a", "b"):  # filled below the fold, never scrolled to
        sel = f"#compare-code-{side}"
        page.wait_for_function(f"() => document.querySelectorAll('{sel} .cm-line').length >= 5", timeout=30_000)
        rows = page.evaluate(GUTTER, sel)
        assert len(rows) >= 5 and all(abs(line - number) <= 1.5 for line, number in rows), (sel, rows)


def test_a_harmless_attack_is_labelled_harmless_in_the_gallery_its_detail_the_examples_and_its_verdict(page):
    page.get_by_role("tab", name="Attacks").click()
    row = page.locator("#attack-gallery tr[data-attack='a11_cache_by_shape']")
    row.wait_for(state="attached", timeout=60_000)
    assert row.get_attribute("data-verdict") == "harmless"
    cells = row.text_content()  # its class may be collapsed
    assert "harmless: earns no more than honest work" in cells and "partial credit" in cells
    choose(page, "attack-select", "a11_cache_by_shape — rmsnorm, harmless: earns no more than honest work")
    page.click("#attack-load-btn")
    detail = wait_status(page, "Loaded attack a11_cache_by_shape")
    assert "It is harmless: earns no more than honest work" in detail and "should stop it" not in detail
    assert page.input_value("#example-select input") == (
        "attack: a11_cache_by_shape (harmless: earns no more than honest work)")
    page.click("#submit-btn")
    page.wait_for_selector("#play-badges [data-step='1']", timeout=180_000)
    label = page.locator("#play-badges .kp-verdict .kp-harmless")
    assert label.get_attribute("data-harmless") == "a11_cache_by_shape"
    said = label.inner_text()
    score = float(re.search(r"It scored (\d\.\d+)", said).group(1))
    assert said.startswith("harmless: earns no more than honest work. It scored")
    if score > 0.1:  # above an honest broken kernel, below honest correct work: says why
        assert "only by partial trial credit" in said and "about 0.75" in said
