"""Playground latency in a real browser: time to interactive, and what a step adds beyond the evaluation.

    python bench/ui_latency.py [--url http://127.0.0.1:8000] [--runs 5] [--task gelu_bias]

Without --url it starts the server (ENABLE_WEB_INTERFACE=true) on a free loopback port. Drives
Debian's headless Chromium (/usr/bin/chromium) with Playwright.

- time to interactive: from navigation start to the Submit button being visible and enabled,
  over --runs fresh page loads (new browser contexts, so no cache);
- step latency: click "Submit step" (a shipped PyTorch solution) until the step's badges are in
  the page, after one warm-up step. The page records, per step, the evaluation's own wall time
  (``data-eval-ms``, the harness) and the environment step as the playground server saw it
  (``data-env-ms``: evaluation + WebSocket round trip). Added latency = browser - evaluation;
  the part owed to the UI alone (Gradio queue, rendering, transport) = browser - environment step;
- reopening a stored episode (Playground II): a reload of the page until the episode's timeline is
  back, and a cold open of its read-only link (``?episode=<id>``, a fresh browser context) until
  the stored episode's timeline is shown.

Prints medians and writes bench/results/ui_latency.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def measure(url: str, runs: int, task: str) -> dict:
    from playwright.sync_api import sync_playwright

    from environment.tasks import get_task

    example = next(p for p in get_task(task).solutions["correct"] if p.name.startswith("torch_"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        tti = []
        for _ in range(runs):
            ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
            page = ctx.new_page()
            page.goto(url + "/web/", wait_until="commit")
            page.wait_for_selector("#submit-btn:not([disabled])", state="visible", timeout=120_000)
            tti.append(page.evaluate("performance.now()"))
            ctx.close()

        ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = ctx.new_page()
        page.goto(url + "/web/")
        page.wait_for_selector("#submit-btn", timeout=120_000)
        if task != "gelu_bias":
            page.click("#task input")
            page.get_by_role("option", name=task, exact=False).first.click()
        box = page.locator("#max-turns input[type=number]")
        box.fill(str(runs + 1))
        box.press("Tab")
        page.click("#example-select input")
        page.get_by_role("option", name=f"correct: {example.stem}", exact=True).click()
        page.click("#load-example-btn")
        page.wait_for_selector("#play-status:has-text('Loaded')", timeout=30_000)
        steps = []
        for n in range(1, runs + 2):  # step 1 warms the worker and the connection
            page.click("#editor .cm-content")  # a distinct source each step
            page.keyboard.press("Control+End")
            page.keyboard.type(f"\n# run {n}\n")
            t0 = time.perf_counter()
            page.click("#submit-btn")
            badges = page.wait_for_selector(f"#play-badges [data-step='{n}']", timeout=300_000)
            browser_ms = (time.perf_counter() - t0) * 1000.0
            if n == 1:
                continue
            steps.append({"browser_ms": browser_ms, "env_ms": float(badges.get_attribute("data-env-ms")),
                          "eval_ms": float(badges.get_attribute("data-eval-ms"))})
        rows = f"#timeline .virtual-row >> nth={runs}"  # all runs + 1 steps are back
        reload_ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            page.reload(wait_until="commit")
            page.wait_for_selector(rows, timeout=120_000)
            reload_ms.append((time.perf_counter() - t0) * 1000.0)
        page.get_by_role("tab", name="Runs").click()
        page.click("#runs-table [data-testid='cell-0-0']")
        page.wait_for_selector("#runs-link:has(input), #runs-link:has(textarea)", timeout=60_000)
        page.wait_for_function("() => /episode=/.test(document.querySelector('#runs-link input, #runs-link "
                               "textarea')?.value || '')", timeout=60_000)
        link = page.locator("#runs-link input, #runs-link textarea").first.input_value()
        ctx.close()
        link_ms = []
        for _ in range(runs):
            other = browser.new_context(viewport={"width": 1440, "height": 1000})
            pg = other.new_page()
            t0 = time.perf_counter()
            pg.goto(url + "/web/" + link, wait_until="commit")
            pg.wait_for_selector(f"#runs-timeline .virtual-row >> nth={runs}", timeout=120_000)
            link_ms.append((time.perf_counter() - t0) * 1000.0)
            other.close()
        browser.close()
    med = statistics.median
    return {
        "url": url, "runs": runs, "task": task, "solution": example.name,
        "time_to_interactive_ms": {"median": round(med(tti), 1), "all": [round(x, 1) for x in tti]},
        "step_ms": {
            "browser_median": round(med(s["browser_ms"] for s in steps), 1),
            "environment_step_median": round(med(s["env_ms"] for s in steps), 1),
            "evaluation_median": round(med(s["eval_ms"] for s in steps), 1),
            # The harness's own wall time when it reports one, else the environment step.
            "added_beyond_evaluation_median": round(med(s["browser_ms"] - (s["eval_ms"] or s["env_ms"])
                                                        for s in steps), 1),
            "added_by_ui_median": round(med(s["browser_ms"] - s["env_ms"] for s in steps), 1),
            "all": steps,
        },
        "reopen_ms": {"reload_median": round(med(reload_ms), 1), "link_cold_median": round(med(link_ms), 1),
                      "reload_all": [round(x, 1) for x in reload_ms], "link_all": [round(x, 1) for x in link_ms]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=None, help="a running server (default: start one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--task", default="gelu_bias")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        from environment.local_server import LocalServer
        import tempfile
        os.environ["ENABLE_WEB_INTERFACE"] = "true"
        os.environ.setdefault("KERNEL_PLAYGROUND_DATA_DIR", tempfile.mkdtemp(prefix="kp-bench-"))
        server = LocalServer(start_timeout_s=300).start()
        url = server.url
    try:
        result = measure(url.rstrip("/"), args.runs, args.task)
    finally:
        if server is not None:
            server.stop()
    out = ROOT / "bench" / "results" / "ui_latency.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    s = result["step_ms"]
    print(f"time to interactive (median of {args.runs}): {result['time_to_interactive_ms']['median']:.0f} ms")
    print(f"step in the browser (median of {args.runs}): {s['browser_median']:.0f} ms; evaluation "
          f"{s['evaluation_median']:.0f} ms; environment step {s['environment_step_median']:.0f} ms")
    print(f"added beyond the evaluation: {s['added_beyond_evaluation_median']:.0f} ms "
          f"(of which the UI alone: {s['added_by_ui_median']:.0f} ms)")
    r = result["reopen_ms"]
    print(f"reopen a stored episode of {args.runs + 1} steps: page reload {r['reload_median']:.0f} ms; "
          f"its link in a fresh browser {r['link_cold_median']:.0f} ms (medians of {args.runs})")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
