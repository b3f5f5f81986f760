"""A first-time visitor's walk through the playground, photographed at 390 and 1440 px, light and dark.

    ENABLE_WEB_INTERFACE=true python app.py --port 7860 &
    python scripts/playground_walk.py http://127.0.0.1:7860 docs/

Each walk opens the page in a fresh browser (no stored episodes), presses "Run demo solution",
waits for its verdict, then opens the Attacks tab. Shots are of the viewport (what the visitor sees),
saved as palette PNGs (small enough for the README): walk-<width>-<theme>-<n>-<what>.png.
Needs Playwright and Debian's Chromium (/usr/bin/chromium).
"""
from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
VIEWPORTS = {390: {"width": 390, "height": 844}, 1440: {"width": 1440, "height": 900}}
STEP_TIMEOUT_MS = 300_000


def save(pg, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    pg.screenshot(path=str(path))
    Image.open(path).convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


def walk(browser, url: str, folder: Path, width: int, theme: str) -> list[Path]:
    ctx = browser.new_context(viewport=VIEWPORTS[width], color_scheme=theme)
    pg = ctx.new_page()
    pg.goto(f"{url}/web/?__theme={theme}")
    pg.wait_for_selector("#demo-btn", timeout=120_000)
    pg.wait_for_timeout(1500)
    tag = f"walk-{width}-{theme}"
    shots = [save(pg, folder, f"{tag}-1-landing")]
    pg.click("#demo-btn")
    pg.wait_for_selector("#play-badges .kp-badges[data-step='1']", timeout=STEP_TIMEOUT_MS)
    pg.wait_for_timeout(1500)  # the page scrolls the verdict into view
    shots.append(save(pg, folder, f"{tag}-2-verdict"))
    pg.evaluate("window.scrollTo(0, 0)")
    tab = pg.get_by_role("tab", name="Attacks")
    if tab.count() and tab.first.is_visible():
        tab.first.click()
    else:  # at 390 px the last tabs sit in Gradio's "More tabs" menu
        pg.click("#tabs .overflow-menu button")
        pg.locator("#tabs .overflow-dropdown button", has_text="Attacks").click()
    pg.wait_for_selector("#attack-gallery .kp-gallery-summary", timeout=60_000)
    pg.evaluate("document.querySelector('#attack-select').scrollIntoView({block: 'start'})")
    pg.wait_for_timeout(800)
    shots.append(save(pg, folder, f"{tag}-3-attacks"))
    ctx.close()
    return shots


def main() -> None:
    url, folder = sys.argv[1].rstrip("/"), Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        for width in VIEWPORTS:
            for theme in ("light", "dark"):
                for path in walk(browser, url, folder, width, theme):
                    print(f"{path} {path.stat().st_size // 1024} KB")
        browser.close()


if __name__ == "__main__":
    main()
