"""The Compare tab: two players on the same task, seed and turns (taken from Play)."""
from __future__ import annotations

from typing import Any

import gradio as gr

from ui import compare as cmp
from ui import render as R
from ui.common import CONCURRENCY, SESSIONS, checked_seed, checked_task, guarded
from ui.players import DEFAULT_MODELS, ModelSettings, resolve_token
from ui.session import busy


def build(play: Any) -> None:
    gr.Markdown("Two players on **the task, seed and max turns picked in Play**, with the Model player's base URL, "
                "token, temperature and max tokens. A side is a model id or *you*: your latest Play episode on "
                "that task and seed.")
    choices = [cmp.YOU] + list(DEFAULT_MODELS)
    with gr.Row():
        side_a = gr.Dropdown(choices, value=cmp.YOU, allow_custom_value=True, label="Player A", elem_id="compare-a")
        side_b = gr.Dropdown(choices, value=DEFAULT_MODELS[0], allow_custom_value=True, label="Player B",
                             elem_id="compare-b")
        run_btn = gr.Button("Run comparison", variant="primary", elem_id="compare-run-btn")
    status = gr.HTML(R.status_html("Choose two players and press Run comparison."), elem_id="compare-status")
    winner = gr.HTML(R.winner_html(("A", None), ("B", None)), elem_id="compare-winner")
    plot = gr.HTML(R.scores_chart_html([], "Score per turn"), elem_id="compare-plot")
    with gr.Row():
        with gr.Column():
            head_a = gr.Markdown("#### A", elem_id="compare-head-a")
            code_a = gr.Code(language="python", interactive=False, label="Best code of A", elem_id="compare-code-a")
        with gr.Column():
            head_b = gr.Markdown("#### B", elem_id="compare-head-b")
            code_b = gr.Code(language="python", interactive=False, label="Best code of B", elem_id="compare-code-b")
    outputs = [status, winner, plot, head_a, code_a, head_b, code_b]

    def view(pairs, message: str, kind: str) -> dict:
        out = {status: R.status_html(message, kind), plot: R.scores_chart_html(pairs, "Score per turn")}
        for (name, record), head, code in zip(pairs, (head_a, head_b), (code_a, code_b)):
            best = R.best_step(record)
            head_text = f"#### {name}"
            if record is not None:
                head_text += f"\nbest score **{R.num(record.score)}** over {len(record.steps)} step(s)"
            out[head] = head_text
            out[code] = best.code if best is not None else ""
        if len(pairs) == 2 and all(r is not None and r.steps for _, r in pairs):
            out[winner] = R.winner_html(pairs[0], pairs[1])
        return out

    @guarded(status)
    def on_run(a, b, task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        sides = ((a or "").strip(), (b or "").strip())
        settings = tuple(None if side == cmp.YOU else ModelSettings.checked(side, url, temp, max_tok)
                         for side in sides)
        session = SESSIONS.get(request)
        token_value = resolve_token(tok, url)
        yield {status: R.status_html("Starting both players…", "busy"),
               winner: R.winner_html(("A", None), ("B", None))}
        last = None
        with busy(session, "compare"):
            for pairs, message in cmp.run(session, task_id, s, int(turns_value), sides, settings, token_value):
                last = pairs
                yield view(pairs, message, "busy")
        yield view(last, "Comparison finished.", "ok")

    run_btn.click(on_run, [side_a, side_b] + play.model_inputs, outputs, api_name="compare",
                  concurrency_limit=CONCURRENCY)
