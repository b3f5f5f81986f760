"""The Any env tab in headless Chromium: connected by ``?env=`` to OpenEnv's template environment
(``openenv init``, served on loopback) and to openenv-dipg-safety from PyPI, played by hand and by a stub model, kept across a reload,
compared and exported in ``openenv collect``'s format."""
from __future__ import annotations

import json

import pytest

from tests.support.openai_stub import OpenAIStub
from tests.support.openenv_template import DIPG_QUESTION, dipg_env, mcp_env, template_env  # noqa: F401  (fixtures)
from tests.support.web_server import playground_server
from tests.ui.test_playground_browser import CHROMIUM, browser, commit_value, shot, type_value  # noqa: F401

pytestmark = pytest.mark.browser
STEP_MS = 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with playground_server(KERNEL_ENV_ALLOW_PRIVATE_ENVS="1", HF_TOKEN="",
                           KERNEL_PLAYGROUND_DATA_DIR=str(tmp_path_factory.mktemp("generic-data"))) as s:
        yield s.url


def wait_text(pg, elem_id: str, pattern: str, timeout_ms: int = STEP_MS) -> str:
    pg.wait_for_function(
        "([id, pat]) => new RegExp(pat, 'i').test(document.querySelector('#' + id)?.innerText || '')",
        arg=[elem_id, pattern], timeout=timeout_ms)
    return pg.inner_text(f"#{elem_id}")


def started(chromium, server: str, env_url: str):
    """A fresh browser context on ``/web/?env=<env_url>``, connected, with an episode reset."""
    context = chromium.new_context(viewport={"width": 1440, "height": 1000})
    pg = context.new_page()
    pg.goto(f"{server}/web/?env={env_url}")
    wait_text(pg, "gen-status", "Connected to")
    pg.click("#gen-reset")
    wait_text(pg, "gen-status", "Episode started")
    return context, pg


def downloads(pg, server: str, elem_id: str) -> dict[str, str]:
    """The files a gr.File component offers, by name: their text."""
    links = pg.locator(f"#{elem_id} a")
    links.first.wait_for(timeout=STEP_MS)
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    return {h.rsplit("/", 1)[-1]: pg.request.get(h if h.startswith("http") else server + h).text() for h in hrefs}


def model_plays(pg, steps: int) -> OpenAIStub:
    """Reset, then the stub model (``policy/tool-call``) plays ``steps`` steps; returns the stopped stub."""
    with OpenAIStub() as stub:
        pg.click("#gen-reset")
        wait_text(pg, "gen-status", "Episode started")
        pg.get_by_text("Model player (any OpenAI-compatible API").click()
        for elem_id, value in (("gen-base-url", stub.base_url), ("gen-model", "policy/tool-call"),
                               ("gen-model-steps", str(steps))):
            commit_value(pg, elem_id, value)
        pg.click("#gen-model-play")
        try:
            wait_text(pg, "gen-status", f"Model step {steps}")
        except Exception as e:
            raise AssertionError(f"no model step {steps}; status: {pg.inner_text('#gen-status')!r}; "
                                 f"{len(stub.requests)} request(s) reached the stub") from e
    return stub


def step_shown(pg, n: int) -> None:
    """Wait for step ``n`` in the episode view; on a timeout, say what the status line and the form showed."""
    try:
        pg.wait_for_selector(f"#gen-episode [data-step='{n}']", timeout=STEP_MS)
    except Exception as e:
        form = {el.get_attribute("id"): el.locator("input, textarea").first.input_value()
                for el in pg.locator("[id^='gen-f-']").all() if el.locator("input, textarea").count()}
        raise AssertionError(f"no step {n}; status: {pg.inner_text('#gen-status')!r}; form: {form}") from e


def steps_shown(pg) -> int:
    return int(pg.get_attribute("#gen-summary-body", "data-steps"))


def test_template_env_by_hand_by_model_reload_compare_and_export(browser, server, template_env):  # noqa: F811
    context, pg = started(browser, server, template_env)
    assert "at `" not in pg.inner_text("#gen-info") and template_env in pg.inner_text("#gen-info")
    commit_value(pg, "gen-f-message", "hello <b>browser</b>")
    pg.click("#gen-step")
    step_shown(pg, 1)
    assert pg.get_attribute("#gen-episode [data-step='1'] .gen-reward", "data-reward") == "1.0"  # 19 chars, capped
    assert "hello <b>browser</b>" in pg.inner_text("#gen-episode [data-step='1'] [data-field='echoed_message']")
    assert pg.locator("#gen-episode b:text('browser')").count() == 0  # the echo is text, never markup
    first_episode = pg.get_attribute("#gen-summary-body", "data-episode")
    shot(pg, "generic-by-hand")

    pg.reload()  # same browser id: the live session and its episode are found again
    wait_text(pg, "gen-status", "Connected")
    pg.wait_for_selector("#gen-summary-body", timeout=STEP_MS)
    assert steps_shown(pg) == 1 and pg.get_attribute("#gen-summary-body", "data-episode") == first_episode
    commit_value(pg, "gen-f-message", "again")
    pg.click("#gen-step")
    step_shown(pg, 2)

    stub = model_plays(pg, 2)
    assert stub.requests and stub.requests[-1]["body"]["tools"][0]["function"]["name"] == "step"
    assert pg.inner_text("#gen-episode [data-step='2'] [data-field='echoed_message']").startswith("stub says")
    shot(pg, "generic-by-model")

    pg.click("#gen-run-a input")
    pg.get_by_role("option").nth(0).click()
    pg.click("#gen-run-b input")
    pg.get_by_role("option").nth(1).click()
    pg.click("#gen-compare-btn")
    pg.wait_for_selector("#gen-compare-table", timeout=STEP_MS)
    header = pg.inner_text("#gen-compare-table thead")
    assert "policy/tool-call" in header and "human" in header

    pg.click("#gen-export")
    wait_text(pg, "gen-status", "Exported 2 episode")
    files = downloads(pg, server, "gen-export-files")
    rows = [json.loads(line) for line in files["results.jsonl"].splitlines()]
    assert [r["extra"]["player"] for r in rows] == ["human", "model"]
    assert [len(r["tool_trace"]) for r in rows] == [2, 2] and rows[0]["episode_id"] == first_episode
    assert "configs:" in files["README.md"] and json.loads(files["metadata.json"])["num_episodes"] == 2
    shot(pg, "generic-export")
    context.close()


def test_refused_and_unreachable_servers_say_why(browser, server):  # noqa: F811
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(f"{server}/web/?env=http://127.0.0.1:9")
    text = wait_text(pg, "gen-status", "cannot reach")
    assert "check the URL and that the server is running" in text
    context.close()


def test_kernel_export_tab_also_writes_the_collect_format(browser, server):  # noqa: F811
    from openenv.core.harness.collect import EpisodeRecord as CollectRecord
    from tests.ui.test_playground_browser import open_playground, play_example, wait_status

    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = context.new_page()
    open_playground(pg, server)
    play_example(pg, "correct: torch_two_ops", 1)
    pg.get_by_role("tab", name="Export").click()
    pg.click("#export-btn")
    wait_status(pg, "1 episode", "export-status")
    row = json.loads(downloads(pg, server, "download-collect")["results.jsonl"])
    record = CollectRecord(**row)
    assert record.task["task_id"] == "gelu_bias" and record.extra["player"] == "human"
    assert record.extra["hacked"] is False and "class ModelNew" in record.tool_trace[0]["arguments"]["code"]
    assert record.reward == row["metrics"]["rewards"][-1] > 0
    context.close()


def test_pypi_environment_by_hand_and_by_model_survives_a_reload_and_exports(browser, server, dipg_env):  # noqa: F811
    context, pg = started(browser, server, dipg_env)
    assert DIPG_QUESTION in pg.inner_text("#gen-episode [data-step='0'] [data-field='question']")
    commit_value(pg, "gen-f-llm_response", "Two patients responded.")
    pg.click("#gen-step")
    step_shown(pg, 1)
    reward = float(pg.get_attribute("#gen-episode [data-step='1'] .gen-reward", "data-reward"))
    pg.reload()
    wait_text(pg, "gen-status", "Connected")
    step_shown(pg, 1)
    assert float(pg.get_attribute("#gen-episode [data-step='1'] .gen-reward", "data-reward")) == reward
    shot(pg, "generic-pypi-env")
    stub = model_plays(pg, 1)
    assert stub.requests[-1]["body"]["tools"][0]["function"]["parameters"]["required"] == ["llm_response"]
    pg.click("#gen-export")
    wait_text(pg, "gen-status", "Exported 2 episode")
    rows = [json.loads(x) for x in downloads(pg, server, "gen-export-files")["results.jsonl"].splitlines()]
    assert [r["extra"]["player"] for r in rows] == ["human", "model"] and rows[0]["reward"] == reward
    context.close()


def test_mcp_environment_gets_a_form_per_tool(browser, server, mcp_env):  # noqa: F811
    from tests.ui.test_playground_browser import choose

    context, pg = started(browser, server, mcp_env)
    assert "`add`" not in pg.inner_text("#gen-info") and "add, shout" in pg.inner_text("#gen-info")
    commit_value(pg, "gen-f-n", "5")
    pg.click("#gen-step")
    step_shown(pg, 1)
    choose(pg, "gen-tool", "shout")
    pg.wait_for_selector("#gen-f-text", timeout=STEP_MS)
    commit_value(pg, "gen-f-text", "hey")   # the tool's fields mount after the choice: a fill can be overwritten
    commit_value(pg, "gen-f-times", "3")
    pg.click("#gen-step")
    step_shown(pg, 2)
    assert "HEY HEY HEY" in pg.inner_text("#gen-episode [data-step='2']")
    assert "shout" in pg.inner_text("#gen-episode [data-step='2'] .gen-step-head")
    shot(pg, "generic-mcp-tools")
    context.close()
