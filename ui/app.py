"""The Kernel Playground: Gradio Blocks mounted at /web by openenv's create_app(gradio_builder=...).

One module per tab: Play (a person or a model plays, one verdict per step), Runs (every stored
episode of this browser, and ``?episode=<id>`` links), Compare, Attacks (the red-team gallery and
the sandbox panel), Replay (an exported file) and Export. Each browser keeps a random id in
localStorage; its episodes live on the server (ui.store), so a reload loses nothing.

To add a tab: write ``ui/<name>_tab.py`` with a ``build(...)`` and add one ``with gr.Tab`` line below.
"""
import logging
import secrets
from typing import Any, Optional

import gradio as gr

from environment.tasks import get_task
from ui import api_tab, compare_tab, export_tab, gallery_tab, replay_tab
from ui import monitor as monitor_view
from ui.generic.tab import GenericTab
from ui.common import (DEFAULT_TASK, SESSIONS, Inspector, checked_seed, default_example,  # noqa: F401
                       example_choices, example_code, step_of)
from ui.line_marker import MARK_LINES
from ui.play_tab import CTRL_ENTER_SUBMITS, FOLLOW_VERDICTS, PlayTab
from ui.runs_tab import RunsTab
from ui.store import valid_id
from ui.style import HEADER

log = logging.getLogger("kernel_playground")
CONCURRENCY = 32
BROWSER_KEY = "kernel-playground-browser-id"  # not a secret (see build_playground)


def build_playground(web_manager: Any = None, action_fields: Any = None, metadata: Any = None,
                     is_chat_env: bool = False, title: str = "Kernel Playground",
                     quick_start_md: Optional[str] = None) -> gr.Blocks:
    """openenv's gradio_builder signature; ``web_manager`` (one env shared by all) is not used for play."""
    first = get_task(DEFAULT_TASK)
    with gr.Blocks(title=title or "Kernel Playground", fill_width=True, delete_cache=(3600, 7200)) as demo:
        # The browser's id: random, kept in localStorage. BrowserState encrypts in the page with a key the
        # page config carries, so the key protects nothing; a fixed one keeps ids readable across restarts.
        browser = gr.BrowserState(None, storage_key="kernel_playground_browser", secret=BROWSER_KEY)
        gr.HTML(HEADER, elem_id="kp-header")
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Play", id="play", elem_id="tab-play"):
                play = PlayTab(first)
            with gr.Tab("Runs", id="runs", elem_id="tab-runs") as runs_tab:
                runs = RunsTab(runs_tab)
            with gr.Tab("Compare", id="compare", elem_id="tab-compare"):
                compare_tab.build(play)
            with gr.Tab("Attacks", id="attacks", elem_id="tab-attacks") as attacks_tab:
                gallery_tab.build(play, tabs, attacks_tab)
            with gr.Tab("Replay", id="replay", elem_id="tab-replay"):
                replay_tab.build()
            with gr.Tab("Export", id="export", elem_id="tab-export"):
                export_tab.build()
            # any OpenEnv server (ui/generic). Its children are mounted with the page, not when a ?env= link selects
            # the tab: mounted then, the schema form (a gr.render) could be mounted again after the player typed
            with gr.Tab("Any env", id="generic", elem_id="tab-generic", render_children=True):
                any_env = GenericTab(browser)
            if monitor_view.enabled():  # KERNEL_ENV_MONITOR=1: every session's episodes (ui/monitor.py)
                with gr.Tab("Monitor", id="monitor", elem_id="tab-monitor"):
                    monitor_view.monitor_tab(Inspector, step_of)
            with gr.Tab("API", id="api", elem_id="tab-api"):  # (openenv's quick_start_md names another port)
                api_tab.build(play, first.id)

        def on_page_load(browser_id: Optional[str], prefs: Any, request: gr.Request):
            if not valid_id(browser_id):
                browser_id = secrets.token_urlsafe(18)
            session = SESSIONS.bind(request, browser_id)
            episode_id = (dict(request.query_params or {}).get("episode") or "").strip() or None
            out = {browser: browser_id}
            out.update(play.apply_prefs(prefs))  # an interrupted auto-play's own settings win (restore)
            try:
                out.update(play.restore(session))
                out.update(runs.restore(session, episode_id, request))
            except Exception:  # a broken store must not break the page: play still works
                log.exception("restoring the page failed")
            if episode_id:
                out[tabs] = gr.Tabs(selected="runs")
            return out

        def on_follow(request: gr.Request):
            yield from play.follow(SESSIONS.get(request))

        page = demo.load(on_page_load, [browser, play.prefs], [browser, tabs] + play.restore_outputs + runs.outputs,
                         api_name="page_load", show_progress="hidden")
        page.then(on_follow, None, play.outputs, show_progress="hidden", concurrency_limit=CONCURRENCY)
        any_env.after(page, tabs)  # ?env= / ?run= deep links, once the browser id is known
        demo.load(None, None, None, js=FOLLOW_VERDICTS)
        demo.load(None, None, None, js=MARK_LINES)
        demo.load(None, None, None, js=CTRL_ENTER_SUBMITS)
        demo.load(None, None, None, js=api_tab.FILL_ORIGIN)
        demo.unload(_drop_session)
        # The page's events are not a public API (the environment's API is OpenEnv's, at the same port): kept
        # callable but out of the API description, which every page load would otherwise carry (~280 KB: each
        # endpoint lists every task and attack).
        for fn in demo.fns.values():
            if fn.api_visibility == "public":
                fn.api_visibility = "undocumented"
    demo.queue(default_concurrency_limit=CONCURRENCY)
    return demo


def _drop_session(request: gr.Request) -> None:
    SESSIONS.drop(request)
