"""The Attacks tab: every red-team attack of tests/redteam/, grouped by class, with what it tries
and which layer stops it; one click loads it into Play. Below, the sandbox layers this host
offers, as GET /sandbox reports them."""
from __future__ import annotations

import json
import urllib.request
from typing import Any, Optional

import gradio as gr

from environment.tasks import get_task
from ui import gallery
from ui.markup import esc, status_html
from ui.common import example_choices, guarded
from ui.session import PlayError, env_base_url

# The layers the harness applies to every candidate when the host offers them (environment/evaluation/
# child/serve.py); GET /sandbox reports more of what the host offers (user namespaces), which nothing applies.
LAYER_NOTES = {
    "landlock": "Landlock: the candidate cannot open files outside its own temporary directory",
    "seccomp": "seccomp: forbidden system calls (processes, sockets, signals, ptrace) kill the candidate",
    "rlimits": "rlimits: memory, CPU time and file sizes are capped",
    "audit_hook": "audit hook: a tripwire on blocked Python events",
}


VERDICT_TEXT = {"caught": "caught: flagged, score 0", "harmless": "harmless: earns no more than honest work",
                "open": "OPEN: not stopped yet (pinned by the test suite)"}


def summary_html(counts: dict) -> str:
    return (f'<p class="kp-gallery-summary" data-attacks="{counts["attacks"]}" data-caught="{counts["caught"]}" '
            f'data-harmless="{counts["harmless"]}" data-open="{counts["open"]}"><b>{counts["attacks"]} attacks:</b> '
            f'{counts["caught"]} caught (flagged, score 0) · {counts["harmless"]} harmless (allowed, but they earn no '
            f'more than honest work, so there is nothing to win) · {counts["open"]} open (not stopped yet; the test '
            'suite pins each one).</p>')


def why_cell(a: gallery.Attack) -> str:
    return a.stopped_by if a.verdict == "caught" else a.harmless_why if a.verdict == "harmless" else ""


def gallery_html(selected: Optional[str] = None) -> str:
    attacks = gallery.attacks()
    if not attacks:
        return ('<div class="kp-muted">The red-team attacks live in tests/redteam/ of the repository, which this '
                'installation does not include.</div>')
    classes: dict[str, list] = {}
    for a in attacks:  # in the order of expected.py, a class's attacks together
        classes.setdefault(a.title, []).append(a)
    parts = []
    for title, items in classes.items():
        rows = "".join(
            f'<tr data-attack="{esc(a.name)}" data-verdict="{a.verdict}"><td><code>{esc(a.name)}</code></td>'
            f'<td>{esc(a.task)}</td><td>{esc(a.tries)}</td><td>{esc(VERDICT_TEXT[a.verdict])}</td>'
            f'<td>{esc(why_cell(a))}</td><td>{esc(a.flag or "")}</td></tr>'
            for a in items)
        opened = " open" if any(a.name == selected for a in items) else ""
        parts.append(f'<details class="kp-group"{opened}><summary>{esc(title)} ({len(items)})</summary>'
                     '<div class="kp-costs"><table><thead><tr><th>attack</th><th>task</th><th>what it tries</th>'
                     f'<th>verdict</th><th>stopped by, or why harmless</th><th>flag</th></tr></thead><tbody>{rows}</tbody></table>'
                     '</div></details>')
    return (f'<div class="kp-gallery" data-attacks="{len(attacks)}">{summary_html(gallery.summary(attacks))}'
            f'{"".join(parts)}</div>')


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
    return [(f"{a.name} — {a.task}, " + (f"caught by {a.layer}" if a.verdict == "caught" else VERDICT_TEXT[a.verdict]),
             a.name) for a in gallery.attacks()]


def first_caught() -> Optional[str]:
    """The gallery opens on a hack that is caught (flagged, score 0), not on a harmless one."""
    return next((a.name for a in gallery.attacks() if a.verdict == "caught"), None)


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
                play.status: status_html(f"Loaded attack {a.name} on {t.id}: it tries {a.tries} " + (
                    f"It is harmless: earns no more than honest work ({a.harmless_why}). Press Submit step to see."
                    if a.verdict == "harmless" else f"Press Submit step: {a.stopped_by} should stop it."), "info"),
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
        chosen = first_caught()
        return {pick: gr.Dropdown(choices=attack_choices(), value=chosen), table: gallery_html(chosen), filled: True}

    tab.select(on_open, [filled], [pick, table, filled], show_progress="hidden")
    load.click(on_load, [pick], [play.task, play.task_shown, play.prompt_md, play.reference, play.editor, play.example,
                                 play.status, status, tabs], api_name="load_attack")
    sandbox_btn.click(on_sandbox, None, [sandbox], api_name="sandbox")
