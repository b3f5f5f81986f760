"""The playground in headless Chromium against the real server on a loopback port.

Screenshots of the main views land in artifacts/screenshots/ (git-ignored; CI uploads them).
Plays use the PyTorch solutions, which evaluate in well under a second.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.openai_stub import OpenAIStub
from tests.support.web_server import playground_server

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
TOKEN = "hf_PlaygroundTestToken0123456789abcdefXYZ"
STEP_TIMEOUT_MS = 180_000  # the first evaluation waits for a warm worker on a loaded host


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with playground_server(KERNEL_PLAYGROUND_MODEL_TIMEOUT_S="4", HF_TOKEN="",
                           KERNEL_PLAYGROUND_DATA_DIR=str(tmp_path_factory.mktemp("playground-data"))) as s:
        yield s.url


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(timeout_s=30) as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    pg = context.new_page()
    open_playground(pg, server)
    yield pg
    context.close()


def open_playground(pg, url: str) -> None:
    pg.goto(url + "/web/")
    pg.wait_for_selector("#submit-btn", timeout=60_000)


def shot(pg, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def choose(pg, elem_id: str, option: str) -> None:
    pg.click(f"#{elem_id} input")
    pg.get_by_role("option", name=option, exact=True).click()


def type_value(pg, elem_id: str, value: str) -> None:
    """Fill a textbox / number / custom-value dropdown and commit it."""
    box = pg.locator(f"#{elem_id} input, #{elem_id} textarea").first
    box.fill(value)
    box.press("Tab")


def wait_step(pg, n: int, prefix: str = "play") -> None:
    pg.wait_for_selector(f"#{prefix}-badges [data-step='{n}']", timeout=STEP_TIMEOUT_MS)


def status(pg, elem_id: str = "play-status") -> str:
    return pg.inner_text(f"#{elem_id}")


def wait_status(pg, pattern: str, elem_id: str = "play-status", timeout_ms: int = STEP_TIMEOUT_MS) -> str:
    """Wait for the status line to match; on a timeout, fail saying what it showed instead."""
    try:
        pg.wait_for_function(
            "([id, pat]) => new RegExp(pat, 'i').test(document.querySelector('#' + id)?.innerText || '')",
            arg=[elem_id, pattern], timeout=timeout_ms)
    except Exception as e:
        raise AssertionError(f"#{elem_id} never matched {pattern!r}; it shows {status(pg, elem_id)!r}") from e
    return status(pg, elem_id)


def commit_value(pg, elem_id: str, value: str, tries: int = 3) -> None:
    """Type ``value`` and wait until the page holds it: a fill that lands while Gradio mounts or re-renders the
    field can be overwritten by its previous value (the fields of an accordion are absent until it opens). A
    person never types that fast, so a field that lost the value is typed again, at most ``tries`` times; one
    that never keeps it fails, naming the field and what it shows."""
    box = pg.locator(f"#{elem_id} input, #{elem_id} textarea").first
    for _ in range(tries):
        type_value(pg, elem_id, value)
        try:
            pg.wait_for_function(
                "([id, v]) => (document.querySelector(`#${id} input, #${id} textarea`) || {}).value === v",
                arg=[elem_id, value], timeout=5_000)
            return
        except Exception:
            pass
    raise AssertionError(f"#{elem_id} never kept {value!r} after {tries} tries: it shows {box.input_value()!r}")


def stage_state(pg, stage: str, prefix: str = "play") -> str:
    return pg.get_attribute(f"#{prefix}-badges [data-stage='{stage}']", "data-state")


def timeline_rows(pg, elem_id: str = "timeline") -> list[str]:
    return [r.inner_text() for r in pg.locator(f"#{elem_id} .virtual-row").all()]


def use_stub_model(pg, stub: OpenAIStub, model: str) -> None:
    for elem_id, value in (("base-url", stub.base_url), ("model-id", model), ("token", TOKEN)):
        commit_value(pg, elem_id, value)


def play_example(pg, example: str, step: int) -> None:
    choose(pg, "example-select", example)
    pg.click("#load-example-btn")
    wait_status(pg, "Loaded")
    pg.click("#submit-btn")
    wait_step(pg, step)


def test_person_plays_graded_task_to_a_correct_solution_and_sees_every_view(page):
    # A wrong answer first: the mismatch table names the first differing elements.
    play_example(page, "wrong: tanh_approx", 1)
    assert stage_state(page, "static") == "pass"
    assert stage_state(page, "compiled") == "pass"
    assert stage_state(page, "correct") == "fail"
    assert "max abs error" in page.inner_text("#play-mismatch-summary")
    assert len(timeline_rows(page, "play-mismatch")) >= 1
    # Then the shipped PyTorch solution: correct, every chart and the breakdown that sums to the score.
    play_example(page, "correct: torch_two_ops", 2)
    assert stage_state(page, "correct") == "pass"
    score = float(re.search(r"Step 2: correct, .*score (\d\.\d+)", status(page)).group(1))
    assert score >= 0.5  # correct earns at least 0.50; speed credit depends on the host
    chart = page.locator("#play-breakdown-chart .kp-chart")
    assert float(chart.get_attribute("data-score")) == pytest.approx(score, abs=0.005)
    title = page.inner_text("#play-breakdown-chart").splitlines()[0]
    parts = [float(x) for x in re.fullmatch(r"Score (\S+) = (\S+) \+ (\S+) \+ (\S+) \+ (\S+)", title).groups()]
    assert parts[1:4] == [0.10, 0.30, 0.10] and sum(parts[1:]) == pytest.approx(parts[0], abs=0.011)
    assert "Timings" in page.inner_text("#play-timing-chart")
    if page.get_attribute("#play-timing-chart .kp-chart", "data-kind") == "modeled":  # CPU host
        assert page.locator("#play-timing-chart .kp-costs[data-launches]").count() == 2  # per-launch costs
        assert "aten.gelu" in page.inner_text("#play-timing-chart .kp-costs[data-launches] >> nth=0")
    assert "no_custom_kernel" in page.inner_text("#play-flags")
    assert "Correctness: correct" in page.input_value("#play-feedback textarea")
    rows = timeline_rows(page)
    assert len(rows) == 2 and "wrong" in rows[0] and "correct" in rows[1]
    assert page.get_attribute("#timeline-plot .kp-chart", "data-points") == "4"  # score and best, 2 steps
    shot(page, "play")
    # Clicking the first timeline row shows that step again, its code and observation included.
    page.click("#timeline [data-testid='cell-0-0']")
    page.wait_for_selector("#play-step-header:has-text('Step 1 of 2')", timeout=30_000)
    assert stage_state(page, "correct") == "fail"
    page.get_by_text("Raw observation JSON").click()
    page.wait_for_selector("#play-json:has-text('mismatch')", timeout=10_000)
    page.get_by_text("Code of this step").click()
    assert "tanh" in page.inner_text("#play-code")


def test_model_auto_plays_to_the_end_streaming_steps_with_prompt_and_reply_inspectable(page, stub):
    use_stub_model(page, stub, "policy/correct")
    type_value(page, "max-turns", "2")
    page.click("#autoplay-btn")
    wait_status(page, "episode over")
    rows = timeline_rows(page)
    assert len(rows) == 2 and all("correct" in r for r in rows)
    assert "policy/correct" in page.inner_text("#episode-summary")
    page.get_by_text("Model prompt and raw reply").click()
    assert "Task: gelu_bias" in page.input_value("#play-prompt textarea")
    assert "```python" in page.input_value("#play-reply textarea")
    assert "class ModelNew" in page.inner_text("#editor")  # the model's code, for a person to take over
    shot(page, "autoplay")
    chat = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert chat and {k.lower(): v for k, v in chat[-1]["headers"].items()}["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in page.content()


@pytest.mark.parametrize("model, base_url, message", [
    ("policy/prose", None, r"no usable code .* no code block"),
    ("policy/timeout", None, r"did not answer within 4 s"),
    ("policy/error", None, r"HTTP 500"),
    ("policy/correct", "http://127.0.0.1:9/v1", r"cannot reach http://127\.0\.0\.1:9/v1"),
])
def test_model_failures_show_a_clear_message_use_no_turn_and_the_session_stays_usable(page, stub, model, base_url,
                                                                                      message):
    use_stub_model(page, stub, model)
    if base_url:
        type_value(page, "base-url", base_url)
    page.click("#model-step-btn")
    text = wait_status(page, message + r".*no turn used")
    assert "Traceback" not in page.content()
    assert page.get_attribute("#play-status .kp-status", "data-kind") == "error"
    assert timeline_rows(page) == []  # the player's error is no step
    if model == "policy/prose":
        shot(page, "model-error")
    play_example(page, "correct: torch_two_ops", 1)  # the same episode goes on, its first turn still unused
    assert re.search(r"Step 1: correct, .*score 0\.[5-9]", status(page)), text
    assert "Steps 1 of 3" in page.inner_text("#episode-summary")


def test_invalid_seed_and_unreadable_replay_file_show_messages(page, tmp_path):
    type_value(page, "seed", "-3")
    page.click("#new-episode-btn")
    wait_status(page, r"seed must be a whole number from 0")
    bad = tmp_path / "episodes.jsonl"
    bad.write_text("this is not json\n")
    page.get_by_role("tab", name="Replay").click()
    page.set_input_files("#replay-file input[type=file]", str(bad))
    wait_status(page, r"cannot replay episodes\.jsonl: .*line 1 is not JSON", "replay-status")
    assert "Traceback" not in page.content()


def compare_you_against_broken_model(pg, stub: OpenAIStub) -> None:
    """A correct Play step, then Compare: A is you, B the stub's deliberately wrong model."""
    play_example(pg, "correct: torch_two_ops", 1)
    use_stub_model(pg, stub, "policy/correct")
    pg.get_by_role("tab", name="Compare").click()
    type_value(pg, "compare-b", "policy/broken")
    pg.click("#compare-run-btn")
    wait_status(pg, "Comparison finished", "compare-status")


def test_compare_person_against_model_on_the_same_task_and_seed(page, stub):
    compare_you_against_broken_model(page, stub)
    assert page.get_attribute("#compare-winner .kp-winner", "data-winner") == "A: you"
    assert "class ModelNew" in page.inner_text("#compare-code-a")
    assert "Wrong on purpose" in page.inner_text("#compare-code-b")
    legend = page.inner_text("#compare-plot")
    assert "A: you" in legend and "B: policy/broken" in legend
    assert page.locator("#compare-plot svg:visible polyline").count() == 2  # (the phone drawing is hidden)
    shot(page, "compare")


def test_export_downloads_load_with_datasets_and_replay_without_rerunning(page, tmp_path):
    datasets = pytest.importorskip("datasets")
    play_example(page, "wrong: tanh_approx", 1)
    play_example(page, "correct: torch_two_ops", 2)
    page.get_by_role("tab", name="Export").click()
    page.click("#export-btn")
    wait_status(page, "1 episode", "export-status")
    files = {}
    for fmt in ("jsonl", "parquet"):
        with page.expect_download() as info:
            page.click(f"#download-{fmt}")
        files[fmt] = tmp_path / f"episodes.{fmt}"
        info.value.save_as(files[fmt])
    shot(page, "export")
    for fmt, builder in (("jsonl", "json"), ("parquet", "parquet")):
        ds = datasets.load_dataset(builder, data_files=str(files[fmt]), split="train")
        assert ds.num_rows == 1
        row = ds[0]
        assert row["task_id"] == "gelu_bias" and row["player"] == "human" and len(row["steps"]) == 2
        assert [m["role"] for m in row["messages"]][:3] == ["system", "user", "assistant"]
        assert row["score"] >= 0.5 and row["success"] is True
    # Replay the export: a fresh upload, step through it, nothing re-run.
    page.get_by_role("tab", name="Replay").click()
    page.set_input_files("#replay-file input[type=file]", str(files["jsonl"]))
    wait_status(page, "Loaded 1 episode", "replay-status")
    assert stage_state(page, "correct", "replay") == "fail"
    page.locator("#replay-step label").nth(1).click()
    page.wait_for_selector("#replay-step-header:has-text('Step 2 of 2')", timeout=30_000)
    assert stage_state(page, "correct", "replay") == "pass"
    assert float(page.inner_text("#replay-breakdown-chart").split()[1]) == pytest.approx(row["score"], abs=0.001)
    shot(page, "replay")


def test_two_browser_contexts_playing_at_once_stay_isolated(browser, server, tmp_path):
    pages = []
    for _ in range(2):
        ctx = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        pg = ctx.new_page()
        open_playground(pg, server)
        pages.append(pg)
    a, b = pages
    choose(a, "example-select", "wrong: tanh_approx")
    a.click("#load-example-btn")
    wait_status(a, "Loaded")
    choose(b, "task", "rmsnorm — RMSNorm (eps 1e-6) (medium, graded)")
    wait_status(b, "starting template")
    choose(b, "example-select", "correct: torch_reference_ops")
    b.click("#load-example-btn")
    wait_status(b, "Loaded")
    a.click("#submit-btn")  # both evaluate at the same time
    b.click("#submit-btn")
    wait_step(a, 1)
    wait_step(b, 1)
    assert stage_state(a, "correct") == "fail" and stage_state(b, "correct") == "pass"
    assert "gelu_bias" in a.inner_text("#episode-summary") and "rmsnorm" in b.inner_text("#episode-summary")
    assert len(timeline_rows(a)) == 1 and len(timeline_rows(b)) == 1
    assert "tanh" in a.inner_text("#editor") and "tanh" not in b.inner_text("#editor")
    # Each export holds only its own episode.
    for pg, task in ((a, "gelu_bias"), (b, "rmsnorm")):
        pg.get_by_role("tab", name="Export").click()
        pg.click("#export-btn")
        wait_status(pg, "1 episode", "export-status")
        with pg.expect_download() as info:
            pg.click("#download-jsonl")
        path = tmp_path / f"{task}.jsonl"
        info.value.save_as(path)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert [r["task_id"] for r in rows] == [task]
    shot(b, "isolation")
    for pg in pages:
        pg.context.close()
