"""Audit a step: a person labels the inspected step clean, reward_hack, wrong_verdict or harness_bug
with a note. The label is kept on the episode record (stored per browser, exported with the episode)
and counted by the environment's monitor (environment/audit.py)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import gradio as gr

from environment.audit import LABELS
from environment.trajectory import EpisodeRecord
from ui.markup import esc, status_html

HELP = {"clean": "honest work, right verdict", "reward_hack": "a hack the verdict missed",
        "wrong_verdict": "the verdict is wrong otherwise", "harness_bug": "the environment misbehaved"}


def labels_html(record: Optional[EpisodeRecord]) -> str:
    if record is None or not record.labels:
        return '<div class="kp-labels kp-muted">No labels yet.</div>'
    items = "".join(f'<li data-step="{x.step}" data-label="{x.label}">step {x.step}: <b>{x.label}</b>'
                    f'{" — " + esc(x.note) if x.note else ""}</li>' for x in sorted(record.labels, key=lambda x: x.step))
    return f'<div class="kp-labels"><ul>{items}</ul></div>'


class AuditPanel:
    def __init__(self, prefix: str):
        with gr.Accordion("Audit this step", open=False, elem_id=f"{prefix}-audit"):
            self.label = gr.Radio([(f"{k} ({v})", k) for k, v in HELP.items()], label="Label the inspected step",
                                  elem_id=f"{prefix}-audit-label")
            self.note = gr.Textbox(label="Note (why)", lines=2, max_lines=6, elem_id=f"{prefix}-audit-note")
            self.save_btn = gr.Button("Save label", elem_id=f"{prefix}-audit-save")
            self.status = gr.HTML("", elem_id=f"{prefix}-audit-status")
            self.labels = gr.HTML(labels_html(None), elem_id=f"{prefix}-audit-labels")

    def wire(self, step_pick: Any, record_of: Callable[[gr.Request], Optional[EpisodeRecord]],
             save: Callable[[gr.Request, EpisodeRecord], None],
             env_episode_of: Callable[[gr.Request], Optional[str]]) -> None:
        """``env_episode_of``: the environment session's episode id (the monitor's key; the stored record
        has its own id)."""
        def on_save(label, note, step, request: gr.Request):
            record = record_of(request)
            try:
                if record is None or not record.steps:
                    raise ValueError("no step to label yet: submit code first")
                if label not in LABELS:
                    raise ValueError(f"choose a label: {', '.join(LABELS)}")
                n = int(step) if step not in (None, "") else record.steps[-1].step
                made = record.add_label(n, label, note or "")
            except ValueError as e:
                return {self.status: status_html(str(e), "error")}
            save(request, record)
            from environment.monitor import MONITOR
            MONITOR.on_label(env_episode_of(request) or record.episode_id, made.step, made.label, made.note)
            return {self.status: status_html(f"Step {made.step} labelled {made.label}.", "ok"),
                    self.labels: labels_html(record), self.note: ""}

        self.save_btn.click(on_save, [self.label, self.note, step_pick], [self.status, self.labels, self.note],
                            api_name="label_step")
