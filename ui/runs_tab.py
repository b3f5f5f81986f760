"""The Runs tab: every episode this browser played, kept on the server; any of them reopens,
read-only, and has a link (``?episode=<id>``) that opens it in any browser."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

import gradio as gr
import pandas as pd

from environment.trajectory import EpisodeRecord
from ui.markup import status_html
from ui.verdict import num
from ui.common import SESSIONS, EpisodeView, guarded, step_of
from ui.autoplay import INTERRUPTED
from ui.store import StoreError, store

RUN_COLUMNS = ["last change (UTC)", "task", "seed", "player", "best", "steps", "hacks", "episode"]


def runs_frame(browser_id: Optional[str]) -> pd.DataFrame:
    cut = store().interrupted(browser_id) if browser_id else {}
    rows = [[datetime.fromtimestamp(r.updated_at, timezone.utc).strftime("%Y-%m-%d %H:%M"), r.task_id, r.seed,
             (f"model {r.model}" if r.player == "model" and r.model else r.player)
             + (f" (auto-play {INTERRUPTED})" if r.episode_id in cut else ""), num(r.score), r.steps,
             r.hacks, r.episode_id] for r in (store().runs(browser_id) if browser_id else [])]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def episode_link(episode_id: str, request: Any = None) -> str:
    """The whole address of the read-only view, as the visitor's browser reaches this page (behind a
    proxy too: its forwarded host and scheme); just the query when the request does not tell."""
    query = f"?episode={episode_id}"
    raw = getattr(request, "request", None)
    headers = getattr(request, "headers", None) or {}
    host = headers.get("x-forwarded-host") or headers.get("host")
    url = getattr(raw, "url", None)
    if not host or url is None:
        return query
    scheme = (headers.get("x-forwarded-proto") or url.scheme or "http").split(",")[0].strip()
    path = url.path.split("/gradio_api")[0].rstrip("/") + "/"
    return f"{scheme}://{host}{path}{query}"


class RunsTab:
    def __init__(self, tab: Any):
        self.tab = tab  # the list refreshes whenever the tab is opened
        gr.Markdown("Every episode this browser played (by hand or by a model) is kept on this server, step by "
                    "step: reload or close the page and nothing is lost. Click a run to reopen it, read-only; its "
                    "link opens the same view in any browser. Tokens are never stored.")
        with gr.Row():
            self.refresh_btn = gr.Button("Refresh", scale=0, min_width=100, elem_id="runs-refresh")
            self.status = gr.HTML(status_html("Your stored episodes appear here."), elem_id="runs-status")
        self.table = gr.Dataframe(pd.DataFrame(columns=RUN_COLUMNS), interactive=False, max_height=260, wrap=True,
                                  label="Runs of this browser (newest first)", elem_id="runs-table")
        self.link = gr.Textbox(label="Read-only link to the open episode",
                               interactive=False, elem_id="runs-link", buttons=["copy"])
        # Mounted only once an episode is opened: a page load (and a first look at the list) skips its ~20 views.
        with gr.Column(visible=False, elem_id="runs-episode") as self.box:
            self.view = EpisodeView("runs", "runs-timeline", "runs-plot", "runs-summary", "runs-step-pick")
        self.outputs = [self.status, self.table, self.link, self.box] + self.view.components
        self._wire()

    def show(self, session: Any, record: EpisodeRecord, message: str, shared: bool = False,
             request: Any = None) -> dict:
        session.opened = record
        if not shared and session.browser_id and record.episode_id in store().interrupted(session.browser_id):
            message += (f" Its model auto-play was {INTERRUPTED}: continue it from the Play tab "
                        "(Continue auto-play, with your token entered again).")
        step = record.steps[-1] if record.steps else None
        out = self.view.values(record, step, "read-only" + (" (shared link)" if shared else ""))
        out[self.link] = episode_link(record.episode_id, request)
        out[self.box] = gr.Column(visible=True)
        out[self.status] = status_html(message, "info")
        return out

    def restore(self, session: Any, episode_id: Optional[str], request: Any = None) -> dict:
        """The episode of a ``?episode=`` link (and the runs list) when the page was opened with one; otherwise
        nothing: the list is read when the tab is opened."""
        if not episode_id:
            return {}
        out = {self.table: runs_frame(session.browser_id)}
        try:
            record = store().get(episode_id)
        except StoreError as e:
            out[self.status] = status_html(f"Cannot open the linked episode: {e}", "error")
            return out
        out.update(self.show(session, record, f"Shared episode {record.episode_id[:8]}…: {record.task_id}, "
                                              f"{len(record.steps)} step(s), read-only.", shared=True,
                                    request=request))
        return out

    def _wire(self) -> None:
        status, view = self.status, self.view

        @guarded(status)
        def on_refresh(request: gr.Request):
            session = SESSIONS.get(request)
            frame = runs_frame(session.browser_id)
            return {self.table: frame, status: status_html(f"{len(frame)} stored episode(s).", "info")}

        @guarded(status)
        def on_select(request: gr.Request):  # the list only: the status may be a shared link's
            return {self.table: runs_frame(SESSIONS.get(request).browser_id)}

        @guarded(status)
        def on_open(evt: gr.SelectData, request: gr.Request):
            session = SESSIONS.get(request)
            frame = runs_frame(session.browser_id)
            row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
            if frame.empty or int(row) >= len(frame):
                return {self.table: frame}
            record = store().get(frame.iloc[int(row)]["episode"])
            out = self.show(session, record, f"Reopened {record.task_id} (seed {record.seed}), "
                                             f"{len(record.steps)} step(s), read-only.", request=request)
            out[self.table] = frame
            return out

        @guarded(status)
        def on_pick(n, request: gr.Request):
            record = getattr(SESSIONS.get(request), "opened", None)
            return view.insp.values(record, step_of(record, n))

        @guarded(status)
        def on_row(evt: gr.SelectData, request: gr.Request):
            return view.row_step(getattr(SESSIONS.get(request), "opened", None), evt)

        self.refresh_btn.click(on_refresh, None, self.outputs, api_name="runs_refresh")
        self.tab.select(on_select, None, self.outputs, show_progress="hidden")
        self.table.select(on_open, None, self.outputs, api_name="runs_open")
        view.step_pick.input(on_pick, [view.step_pick], self.outputs, api_name="runs_step")
        view.timeline.select(on_row, None, self.outputs)
