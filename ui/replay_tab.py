"""The Replay tab: an exported episode file, step by step; nothing is re-run."""
from __future__ import annotations

from typing import Any

import gradio as gr

from ui.charts import scores_chart_html
from ui.episode_view import timeline_frame
from ui.markup import status_html
from ui.common import SESSIONS, Inspector, guarded, step_of
from ui.replay_export import episode_label, load_replay
from ui.session import PlayError


def build() -> None:
    gr.Markdown("Load an exported episode file (.jsonl or .parquet from the Export tab or `inference.py --output`) "
                "and step through it. Nothing is re-run: every view comes from the file.")
    with gr.Row():
        upload = gr.File(label="Episode file", file_types=[".jsonl", ".parquet", ".json"], elem_id="replay-file",
                         scale=2)
        with gr.Column(scale=3):
            status = gr.HTML(status_html("No file loaded."), elem_id="replay-status")
            episode = gr.Dropdown([], label="Episode", elem_id="replay-episode")
            step_pick = gr.Radio([], label="Step", elem_id="replay-step")
    with gr.Row():
        plot = gr.HTML(scores_chart_html([]), elem_id="replay-plot")
        timeline = gr.Dataframe(timeline_frame(None), interactive=False, max_height=220, elem_id="replay-timeline")
    insp = Inspector("replay")
    outputs = [status, episode, step_pick, plot, timeline] + insp.components

    def show(records, i: int, n: Any = None) -> dict:
        record = records[i]
        step = step_of(record, n) if n is not None else (record.steps[0] if record.steps else None)
        out = {episode: gr.Dropdown(choices=[(episode_label(k, r), k) for k, r in enumerate(records)], value=i),
               step_pick: gr.Radio(choices=[s.step for s in record.steps], value=step.step if step else None),
               plot: scores_chart_html([("episode", record)]), timeline: timeline_frame(record)}
        out.update(insp.values(record, step))
        return out

    @guarded(status)
    def on_upload(path, request: gr.Request):
        session = SESSIONS.get(request)
        session.replay = []
        records = load_replay(path)
        session.replay = records
        out = show(records, 0)
        out[status] = status_html(f"Loaded {len(records)} episode(s); showing step 1 of the first.", "ok")
        return out

    @guarded(status)
    def on_episode(i, request: gr.Request):
        records = SESSIONS.get(request).replay
        if not records:
            raise PlayError("load an episode file first")
        return show(records, int(i or 0))

    @guarded(status)
    def on_step(i, n, request: gr.Request):
        records = SESSIONS.get(request).replay
        if not records:
            raise PlayError("load an episode file first")
        return show(records, int(i or 0), n)

    upload.upload(on_upload, [upload], outputs, api_name="replay_load")
    episode.input(on_episode, [episode], outputs, api_name="replay_episode")
    step_pick.input(on_step, [episode, step_pick], outputs, api_name="replay_step")
