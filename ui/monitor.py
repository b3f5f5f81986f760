"""The playground's Monitor view: what the environment serves to every session (a training run's
rollouts included), sampled for inspection; any episode opens in the step inspector.

Shown only when the server runs with ``KERNEL_ENV_MONITOR=1`` (it shows other sessions' code). With
``KERNEL_ENV_MONITOR_TOKEN`` set the view asks for the token; it is checked on the server for every
request and never rendered into the page. Reads the in-process ``environment.monitor.MONITOR``: the
playground and the environment are one server.
"""
from __future__ import annotations

import hmac
from typing import Any, Callable, Optional

import gradio as gr
import pandas as pd

from environment import monitor
from environment.trajectory import EpisodeRecord
from ui.markup import esc, status_html
from ui.signals_view import monitor_signals_html

COLUMNS = ["episode", "task", "seed", "steps", "reward", "success", "hacked", "flags", "harness errors", "updated"]
enabled = monitor.enabled


class MonitorDenied(Exception):
    pass


def _check(token: Optional[str]) -> None:
    if not monitor.enabled():
        raise MonitorDenied("the monitor is off on this server (KERNEL_ENV_MONITOR)")
    expected = monitor.token()
    if expected and not hmac.compare_digest((token or "").encode(), expected.encode()):
        raise MonitorDenied("type the monitor token (KERNEL_ENV_MONITOR_TOKEN of this server) and refresh")


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def summary_html(s: dict[str, Any]) -> str:
    cards = [("episodes", s["episodes"]), ("evaluations", s["steps"]), ("success rate", _pct(s["success_rate"])),
             ("hack rate", _pct(s["hack_rate"])), ("evaluations / min", s["evaluations_per_minute"]["last_minute"]),
             ("harness errors", s["harness_errors"]["count"])]
    out = ['<div id="monitor-cards" style="display:flex;gap:12px;flex-wrap:wrap">']
    out += [f'<div class="monitor-card" style="border:1px solid #8884;border-radius:8px;padding:6px 12px">'
            f'<div style="font-size:0.8em;opacity:0.7">{esc(k)}</div><b>{esc(v)}</b></div>' for k, v in cards]
    out.append("</div>")
    if s["flags"]:
        out.append('<p id="monitor-flags">Flags: ' + ", ".join(
            f"<code>{esc(k)}</code> × {v}" for k, v in s["flags"].items()) + "</p>")
    out.append(monitor_signals_html(s.get("signals")))
    out.append('<table id="monitor-tasks"><tr><th>task</th><th>episodes</th><th>success</th><th>hacks</th>'
               '<th>mean reward</th><th>reward histogram (0 … 1)</th></tr>')
    for task_id, t in s["tasks"].items():
        counts = t["reward_histogram"]["counts"]
        top = max(counts) or 1
        bars = "".join(f'<span title="{i / 10:.1f}-{(i + 1) / 10:.1f}: {c}" style="display:inline-block;width:10px;'
                       f'height:{2 + 22 * c // top}px;background:#6c8ebf;margin-right:1px"></span>'
                       for i, c in enumerate(counts))
        mean = "n/a" if t["mean_reward"] is None else f"{t['mean_reward']:.2f}"
        out.append(f'<tr data-task="{esc(task_id)}"><td>{esc(task_id)}</td><td>{t["episodes"]}</td>'
                   f'<td>{_pct(t["success_rate"])}</td><td>{_pct(t["hack_rate"])}</td><td>{mean}</td>'
                   f'<td style="vertical-align:bottom">{bars}</td></tr>')
    out.append("</table>")
    for err in s["harness_errors"]["recent"]:
        out.append(f'<p class="monitor-harness-error">harness error · {esc(err["task_id"])} step {err["step"]}: '
                   f'{esc(err["error"])}</p>')
    return "".join(out)


def episodes_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([[r["episode_id"], r["task_id"], r["seed"], r["steps"],
                          "n/a" if r["reward"] is None else round(r["reward"], 3), r["success"], r["hacked"],
                          ", ".join(r["flags"]), r["harness_errors"], r["updated_at"]] for r in rows], columns=COLUMNS)


def monitor_tab(inspector_cls: Callable[[str], Any], step_of: Callable[[Optional[EpisodeRecord], Any], Any]) -> None:
    """Build the view inside the caller's ``gr.Tab``; ``inspector_cls``/``step_of`` are the playground's."""
    gr.Markdown("Recent episodes from every session of this server (training runs included), with what the reward "
                "saw. Pick an episode to open it in the step inspector.")
    with gr.Row():
        token = gr.Textbox(label="Monitor token", type="password", visible=monitor.token() is not None,
                           elem_id="monitor-token", scale=2)
        task = gr.Dropdown(["all"], value="all", label="Task", elem_id="monitor-task", scale=2)
        kind = gr.Dropdown(list(monitor.KINDS), value="all", label="Show", elem_id="monitor-kind", scale=2)
        sample = gr.Checkbox(False, label="Random sample", elem_id="monitor-sample", scale=1)
        refresh = gr.Button("Refresh", variant="primary", elem_id="monitor-refresh", scale=1)
    status = gr.HTML(status_html("Press Refresh."), elem_id="monitor-status")
    summary = gr.HTML("", elem_id="monitor-summary")
    table = gr.Dataframe(episodes_frame([]), interactive=False, max_height=300, elem_id="monitor-episodes")
    with gr.Row():
        episode = gr.Dropdown([], label="Episode", elem_id="monitor-episode", scale=3)
        step_pick = gr.Radio([], label="Step", elem_id="monitor-step", scale=2)
    insp = inspector_cls("monitor")

    def on_refresh(tok, task_value, kind_value, sampled):
        try:
            _check(tok)
        except MonitorDenied as e:
            return {status: status_html(str(e), "error")}
        s = monitor.MONITOR.summary(recent=0)
        rows = monitor.MONITOR.episodes(50, task=None if task_value in (None, "all") else task_value,
                                        kind=kind_value or "all", sample=bool(sampled))
        return {status: status_html(f"{len(rows)} episode(s) shown of {s['episodes']} kept.", "ok"),
                summary: summary_html(s), table: episodes_frame(rows),
                task: gr.Dropdown(choices=["all"] + list(s["tasks"]), value=task_value or "all"),
                episode: gr.Dropdown(choices=[(f"{r['task_id']} · {r['episode_id'][:8]} · reward "
                                               f"{'n/a' if r['reward'] is None else round(r['reward'], 2)}",
                                               r["episode_id"]) for r in rows], value=None)}

    def show(tok, episode_id, n=None):
        try:
            _check(tok)
        except MonitorDenied as e:
            return {status: status_html(str(e), "error")}
        record = monitor.MONITOR.episode(episode_id) if episode_id else None
        if record is None:
            return {status: status_html("that episode is no longer in the buffer; refresh", "error")}
        step = step_of(record, n)
        out = {step_pick: gr.Radio(choices=[s.step for s in record.steps], value=step.step if step else None),
               status: status_html(f"Episode {record.episode_id[:8]} on {record.task_id}: {len(record.steps)} "
                                     "step(s).", "ok")}
        out.update(insp.values(record, step))
        return out

    def on_row(evt: gr.SelectData, tok, frame):
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        episode_id = frame.iloc[int(row)]["episode"]
        out = show(tok, episode_id)
        out[episode] = gr.Dropdown(value=episode_id)
        return out

    outputs = [status, summary, table, task, episode, step_pick] + insp.components
    refresh.click(on_refresh, [token, task, kind, sample], outputs, api_name=False)
    episode.input(lambda tok, e: show(tok, e), [token, episode], outputs, api_name=False)
    step_pick.input(show, [token, episode, step_pick], outputs, api_name=False)
    table.select(on_row, [token, table], outputs, api_name=False)
