"""The Compare tab: two to four players on the same task, seed and turns (taken from Play), a
per-turn chart, the diff of their best code, and the task's leaderboard over stored episodes."""
from __future__ import annotations

from typing import Any

import gradio as gr

from ui import compare as cmp
from ui.charts import scores_chart_html
from ui.episode_view import best_step, ranking_html, winner_html
from ui.markup import status_html
from ui.verdict import num, verdict_of
from ui.common import CONCURRENCY, SESSIONS, checked_seed, checked_task, guarded
from ui.players import DEFAULT_MODELS, ModelSettings, resolve_token
from ui.session import PlayError, busy
from ui.store import store

NONE = "(none)"
SIDES = "ABCD"


def build(play: Any) -> None:
    gr.Markdown("Two to four players on **the task, seed and max turns picked in Play**, with the Model player's "
                "base URL, token, temperature and max tokens. A side is a model id or *you*: your latest Play "
                "episode on that task and seed.")
    choices = [cmp.YOU] + list(DEFAULT_MODELS)
    defaults = (cmp.YOU, DEFAULT_MODELS[0], NONE, NONE)
    with gr.Row():
        pickers = [gr.Dropdown(choices if i < 2 else [NONE] + choices, value=defaults[i], allow_custom_value=True,
                               label=f"Player {side}" + ("" if i < 2 else " (optional)"),
                               elem_id=f"compare-{side.lower()}") for i, side in enumerate(SIDES)]
    run_btn = gr.Button("Run comparison", variant="primary", elem_id="compare-run-btn")
    status = gr.HTML(status_html("Choose the players and press Run comparison."), elem_id="compare-status")
    winner = gr.HTML(winner_html(("A", None), ("B", None)), elem_id="compare-winner")
    plot = gr.HTML(scores_chart_html([], "Score per turn"), elem_id="compare-plot")
    heads, codes = [], []
    with gr.Row():
        for side in SIDES:
            with gr.Column(min_width=240):
                heads.append(gr.Markdown(f"#### {side}", elem_id=f"compare-head-{side.lower()}"))
                codes.append(gr.Code(language="python", interactive=False, label=f"Best code of {side}",
                                     elem_id=f"compare-code-{side.lower()}"))
    with gr.Accordion("Diff of the best code: A against each other player", open=False):
        diff = gr.Code(language=None, interactive=False, elem_id="compare-diff")
    gr.Markdown("#### Leaderboard of this task over every stored episode (same seed)")
    board = gr.Dataframe(cmp.leaderboard([]), interactive=False, max_height=260, elem_id="compare-leaderboard")
    board_btn = gr.Button("Refresh leaderboard", elem_id="compare-board-btn")
    outputs = [status, winner, plot, diff, board] + heads + codes

    def view(pairs, message: str, kind: str) -> dict:
        out = {status: status_html(message, kind), plot: scores_chart_html(pairs, "Score per turn")}
        bests = []
        for i, (head, code) in enumerate(zip(heads, codes)):
            name, record = pairs[i] if i < len(pairs) else (SIDES[i], None)
            best = best_step(record)
            bests.append((name, best.code if best is not None else None))
            text = f"#### {name}"
            if record is not None:
                text += (f"\nbest score **{num(record.score)}** over {len(record.steps)} step(s)"
                         + (f"; last: {verdict_of(record.steps[-1]).short}" if record.steps else ""))
            out[head], out[code] = text, bests[-1][1] or ""
        out[diff] = "\n".join(d for d in (cmp.code_diff(bests[0][1], b, bests[0][0], n) for n, b in bests[1:]) if d)
        ranked = cmp.ranking(pairs)
        if len(ranked) == len(pairs) and ranked:
            out[winner] = ranking_html(ranked)
        return out

    def board_of(task_id, seed_value) -> Any:
        return cmp.leaderboard(store().task_records(checked_task(task_id), checked_seed(seed_value)))

    @guarded(status)
    def on_run(a, b, c, d, task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        sides = [x for x in ((v or "").strip() for v in (a, b, c, d)) if x and x != NONE]
        if len(sides) < 2:
            raise PlayError("choose at least two players (A and B)")
        settings = [None if side == cmp.YOU else ModelSettings.checked(side, url, temp, max_tok) for side in sides]
        session = SESSIONS.get(request)
        token_value = resolve_token(tok, url)
        yield {status: status_html(f"Starting {len(sides)} players…", "busy"),
               winner: winner_html(("A", None), ("B", None))}
        with busy(session, "compare"):
            for pairs, message, kind in cmp.run(session, task_id, s, int(turns_value), sides, settings, token_value):
                out = view(pairs, message, kind)
                if " played" in message or kind != "busy":  # a step was stored: the leaderboard moves with it
                    out[board] = board_of(task_id, s)
                yield out

    @guarded(status)
    def on_board(task_id, seed_value):
        return {board: board_of(task_id, seed_value)}

    run_btn.click(on_run, pickers + play.model_inputs, outputs, api_name="compare", concurrency_limit=CONCURRENCY)
    board_btn.click(on_board, [play.task, play.seed], outputs, api_name="leaderboard")
