"""The Attacks tab: every red-team attack of tests/redteam/, grouped by class, with what it tries
and which layer stops it; one click loads it into Play. Below, the sandbox layers this host
offers, as GET /sandbox reports them."""
from __future__ import annotations

import json
import urllib.request
from itertools import groupby
from typing import Any

import gradio as gr

from environment.tasks import get_task
from ui import gallery
from ui.markup import esc, status_html
from ui.common import example_choices, guarded
from ui.session import PlayError, env_base_url

# The layers the harness applies to every candidate when the host offers them (environment/evaluation/
# child.py); GET /sandbox reports more of what the host offers (user namespaces), which nothing applies.
LAYER_NOTES = {
    "landlock": "Landlock: the candidate cannot open files outside its own temporary directory",
    "seccomp": "seccomp: forbidden system calls (processes, sockets, signals, ptrace) kill the candidate",
    "rlimits": "rlimits: memory, CPU time and file sizes are capped",
    "audit_hook": "audit hook: a tripwire on blocked Python events",
}


def gallery_html() -> str:
    attacks = gallery.attacks()
    if not attacks:
        return ('<div class="kp-muted">The red-team attacks live in tests/redteam/ of the repository, which this '
                'installation does not include.</div>')
    parts = []
    for group, items in groupby(attacks, key=lambda a: a.group):
        items = list(items)
        rows = "".join(
            f'<tr data-attack="{esc(a.name)}"><td><code>{esc(a.name)}</code></td><td>{esc(a.task)}</td>'
            f'<td>{esc(a.tries)}</td><td>{esc(a.layer)}</td>'
            f'<td>{esc(a.flag or ("no flag: earns no more than honest work" if a.outcome == "harmless" else ""))}'
            f'</td></tr>' for a in items)
        parts.append(f'<details class="kp-group"><summary>{esc(group)} ({len(items)})</summary>'
                     '<div class="kp-costs"><table><thead><tr><th>attack</th><th>task</th><th>what it tries</th>'
                     f'<th>stopped by</th><th>flag</th></tr></thead><tbody>{rows}</tbody></table></div></details>')
    return f'<div class="kp-gallery" data-attacks="{len(attacks)}">{"".join(parts)}</div>'


def sandbox_html(info: dict) -> str:
    """Only the layers applied to the candidate on this host; those the host lacks are named apart."""
    layers = info.get("layers") or {}
    applied = [k for k in LAYER_NOTES if layers.get(k)]
    missing = [k for k in LAYER_NOTES if not layers.get(k)]
    items = "".join(f'<li data-layer="{esc(k)}" data-on="true">✔ {esc(LAYER_NOTES[k])}</li>' for k in applied)
    lacking = (f'<p class="kp-muted" data-missing="{esc(" ".join(missing))}">Not available on this host, so not '
               f'applied: {esc(", ".join(missing))}.</p>' if missing else "")
    return (f'<div class="kp-sandbox" data-backend="{esc(info.get("backend", "?"))}"><b>Backend:</b> '
            f'{esc(info.get("backend", "?"))} · <b>workers:</b> {esc(info.get("workers", "?"))}'
            f'<p>Applied to every candidate:</p><ul>{items}</ul>{lacking}<p class="kp-muted">Not used: user '
            'namespaces (the candidate runs as the server\'s user, confined by the layers above).</p></div>')


def attack_choices() -> list[tuple[str, str]]:
    return [(f"{a.name} — {a.task}, stopped by {a.layer}", a.name) for a in gallery.attacks()]


def build(play: Any, tabs: Any, tab: Any) -> None:
    """The tab's table and list (~60 KB for 110 attacks) are filled when the tab is first opened, not
    carried by every page load."""
    gr.Markdown("Reward hacks people (and models) try, each a file in `tests/redteam/attacks/` that the test suite "
                "runs against the harness. Open a class to see what each attack tries and which layer stops it; "
                "load one into Play and submit it to watch the verdict.")
    with gr.Row():
        pick = gr.Dropdown([], value=None, label="Attack", scale=4, elem_id="attack-select")
        load = gr.Button("Load into Play", variant="primary", scale=1, elem_id="attack-load-btn")
    status = gr.HTML("", elem_id="attack-status")
    table = gr.HTML('<div class="kp-muted">Opening the gallery…</div>', elem_id="attack-gallery")
    filled = gr.State(False)
    gr.Markdown("#### Sandbox layers of this host")
    sandbox_btn = gr.Button("Show the sandbox layers (GET /sandbox)", elem_id="sandbox-btn")
    sandbox = gr.HTML("", elem_id="sandbox-panel")

    @guarded(status)
    def on_load(name):
        try:
            a = gallery.by_name(name or "")
        except KeyError:
            raise PlayError("choose an attack from the list") from None
        t = get_task(a.task)
        return {**play.show_task(t.id), play.editor: a.code(),
                play.example: gr.Dropdown(choices=example_choices(t.id), value=f"attack/{a.file}"),
                play.status: status_html(f"Loaded attack {a.name} on {t.id}: it tries {a.tries} Press Submit "
                                           f"step: {a.stopped_by} should stop it.", "info"),
                status: status_html(f"{a.name} is in the Play tab's editor.", "info"),
                tabs: gr.Tabs(selected="play")}

    @guarded(sandbox)
    def on_sandbox(request: gr.Request):
        url = env_base_url(request) + "/sandbox"
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                info = json.loads(r.read().decode())
        except (OSError, ValueError) as e:
            raise PlayError(f"GET /sandbox failed: {e}") from None
        return {sandbox: sandbox_html(info)}

    def on_open(done: bool):
        if done:
            return {}
        choices = attack_choices()
        return {pick: gr.Dropdown(choices=choices, value=choices[0][1] if choices else None), table: gallery_html(),
                filled: True}

    tab.select(on_open, [filled], [pick, table, filled], show_progress="hidden")
    load.click(on_load, [pick], [play.task, play.task_shown, play.prompt_md, play.reference, play.editor, play.example,
                                 play.status, status, tabs], api_name="load_attack")
    sandbox_btn.click(on_sandbox, None, [sandbox], api_name="sandbox")
