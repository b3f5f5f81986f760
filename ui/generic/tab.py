"""The "Any env" tab: connect to any OpenEnv server by URL and play it by hand or with a model.

Deep links: ``/web/?env=<url>`` opens this tab connected to ``<url>`` (and shows this browser's
newest episode there); ``/web/?run=<episode id>`` opens one stored episode read-only.
"""
from __future__ import annotations

import html
import logging
from typing import Any, Optional

import gradio as gr

from ui.generic import render
from ui.generic.collect_export import collect_files
from ui.generic.episode import GenericEpisode
from ui.generic.live import LIVE, Live, save
from ui.generic.runs import runs
from ui.generic.schema_form import FormError, FormField, assemble, initial
from ui.generic.target import TargetError
from ui.markup import status_html
from ui.players import DEFAULT_MODELS, ROUTER_URL, ModelSettings, resolve_token
from ui.store import StoreError

log = logging.getLogger("kernel_playground")
MAX_MODEL_STEPS = 50
USER_ERRORS = (TargetError, FormError, StoreError, ValueError)


def _episode_view(ep: Optional[GenericEpisode]) -> str:
    if ep is None:
        return render.episode_html([])
    steps = [render.step_html(0, "reset", None, {"observation": ep.reset_observation})]
    steps += [render.step_html(s.step, f"step {s.step}" + (f" · {s.tool_name}" if s.tool_name != "step" else ""),
                               s.action, {"observation": s.observation, "reward": s.reward, "done": s.done}, s.error)
              for s in ep.steps]
    return render.episode_html(steps)


def _summary(ep: Optional[GenericEpisode]) -> str:
    if ep is None:
        return ""
    who = f"model {ep.model}" if ep.model else ep.player
    link = f"?run={ep.episode_id}"
    return (f'<div id="gen-summary-body" data-steps="{len(ep.steps)}" data-done="{str(ep.done).lower()}" '
            f'data-episode="{html.escape(ep.episode_id)}">{html.escape(ep.env_name)} · seed {ep.seed} · '
            f'{html.escape(who)} · {len(ep.steps)} step(s) · total reward {ep.total_reward:g} · '
            f'{"done" if ep.done else "not done"} · <a href="{html.escape(link)}">link to this episode</a></div>')


def _info(live: Live) -> str:
    md = live.target.metadata
    tools = ", ".join(f"`{t['name']}`" for t in live.tools)
    return (f"**{md.get('name') or live.target.name}** {md.get('version') or ''} at `{live.target.url}`\n\n"
            f"{md.get('description') or ''}\n\n" + (f"MCP tools: {tools}\n\n" if tools else ""))


def _forms_spec(live: Live) -> dict:
    """What the form is built from; one state, so each change renders the form once (a second render
    would drop what the player already typed)."""
    forms = {name: [f.__dict__ for f in fs] for name, fs in live.forms().items()}
    return {"url": live.target.url, "forms": forms, "tool": next(iter(forms))}


def _run_choices(browser_id: Optional[str]) -> list[tuple[str, str]]:
    if not browser_id:
        return []
    return [(f"{e.env_name} · seed {e.seed} · {e.model or e.player} · {len(e.steps)} steps · "
             f"reward {e.total_reward:g} · {e.created_at:%H:%M:%S}", e.episode_id) for e in runs().episodes(browser_id)]


def _compare_html(a: Optional[GenericEpisode], b: Optional[GenericEpisode]) -> str:
    if a is None or b is None:
        return status_html("choose two stored runs to compare", "info")
    note = "" if (a.env_url, a.seed) == (b.env_url, b.seed) else \
        '<p class="gen-warn">These runs differ in environment or seed: their rewards are not comparable step by step.</p>'
    rows = "".join(
        f"<tr><td>{i + 1}</td>" + "".join(
            f"<td>{html.escape(str(ep.steps[i].reward)) if i < len(ep.steps) else ''}</td>" for ep in (a, b)) + "</tr>"
        for i in range(max(len(a.steps), len(b.steps))))
    head = "".join(f"<th>{html.escape(ep.model or ep.player)} (seed {ep.seed})</th>" for ep in (a, b))
    totals = "".join(f"<td><b>{ep.total_reward:g}</b></td>" for ep in (a, b))
    return (f'{note}<table class="gen-table" id="gen-compare-table"><thead><tr><th>step</th>{head}</tr></thead>'
            f"<tbody>{rows}<tr><td>total</td>{totals}</tr></tbody></table>"
            f'<div class="gen-compare-cols" style="display:flex;gap:1em"><div style="flex:1">{_episode_view(a)}</div>'
            f'<div style="flex:1">{_episode_view(b)}</div></div>')


class GenericTab:
    def __init__(self, browser: gr.BrowserState):
        self.browser = browser
        gr.Markdown("Connect to any OpenEnv server (a local `uvicorn` app, a container, a Space) by URL: the form "
                    "is built from its `/schema`, you play over `/ws` in a session of your own, and every step is "
                    "kept here. `/web/?env=<url>` opens this tab connected.")
        with gr.Row():
            self.url = gr.Textbox(label="OpenEnv server URL", placeholder="http://127.0.0.1:8000", scale=4,
                                  elem_id="gen-url")
            self.connect_btn = gr.Button("Connect", variant="primary", elem_id="gen-connect", scale=1)
        self.status = gr.HTML(status_html("Not connected."), elem_id="gen-status")
        self.info = gr.Markdown("", elem_id="gen-info")
        self.spec = gr.State(None)
        with gr.Row():
            self.seed = gr.Textbox(label="Seed (optional whole number; empty sends none)", elem_id="gen-seed")
            self.reset_btn = gr.Button("Reset (new episode)", elem_id="gen-reset")
        self.tool = gr.Dropdown(label="Tool", choices=[], visible=False, elem_id="gen-tool")

        # Rendered on the spec's change only (not also on page load, gr.render's default): a load-time
        # render racing the reload's spec would render the form twice. The keys keep what the player
        # typed if the same form is rendered again.
        @gr.render(inputs=[self.spec], triggers=[self.spec.change])
        def form(spec: Optional[dict]):
            if not spec:
                return
            forms = spec["forms"]
            name = spec["tool"] if spec.get("tool") in forms else next(iter(forms))
            specs = [FormField(**{**f, "path": tuple(f["path"]), "choices": tuple(f["choices"])}) for f in forms[name]]
            key = (spec["url"], name)
            inputs = [self._component(f, key) for f in specs]
            step_btn = gr.Button(f"Step ({name})" if name != "step" else "Step", variant="primary",
                                 elem_id="gen-step", key=(*key, "step"))

            def on_step(browser_id, *values):
                return self._human_step(browser_id, name, specs, list(values))

            step_btn.click(on_step, [self.browser] + inputs, self.play_outputs, concurrency_limit=16)

        self.summary = gr.HTML("", elem_id="gen-summary")
        self.episode = gr.HTML(render.episode_html([]), elem_id="gen-episode")
        with gr.Accordion("Model player (any OpenAI-compatible API; the action schema is its tool)", open=False):
            with gr.Row():
                self.base_url = gr.Textbox(ROUTER_URL, label="API base URL", elem_id="gen-base-url")
                self.model = gr.Dropdown(list(DEFAULT_MODELS), value=DEFAULT_MODELS[0], allow_custom_value=True,
                                         label="Model", elem_id="gen-model")
                self.token = gr.Textbox(label="Token (never stored)", type="password", elem_id="gen-token")
                self.model_steps = gr.Number(5, label="Steps", precision=0, elem_id="gen-model-steps")
            with gr.Row():
                self.play_btn = gr.Button("Model plays", elem_id="gen-model-play")
                self.stop_btn = gr.Button("Stop", elem_id="gen-model-stop")
        with gr.Accordion("Runs, compare and export", open=True):
            with gr.Row():
                self.run_a = gr.Dropdown(label="Run", choices=[], elem_id="gen-run-a")
                self.run_b = gr.Dropdown(label="Compare with", choices=[], elem_id="gen-run-b")
                self.open_btn = gr.Button("Open run", elem_id="gen-open-run")
                self.compare_btn = gr.Button("Compare", elem_id="gen-compare-btn")
            self.compare = gr.HTML("", elem_id="gen-compare")
            with gr.Row():
                self.export_btn = gr.Button("Export (openenv collect format)", elem_id="gen-export")
                self.files = gr.File(label="results.jsonl, metadata.json, README.md", file_count="multiple",
                                     interactive=False, elem_id="gen-export-files")
        self.play_outputs = [self.status, self.summary, self.episode]
        self._wire()

    # ---- components and handlers ------------------------------------------------------------
    @staticmethod
    def _component(f: FormField, form_key: tuple[str, str]):
        elem_id = "gen-f-" + "-".join(f.path)
        label = f.label + ("" if f.required else " (optional)")
        value = initial(f)
        common = {"elem_id": elem_id, "key": (*form_key, elem_id), "interactive": True}
        info = f.description[:200] or None
        if f.kind == "code":
            return gr.Code(value=value or "", language="python" if f.path[-1] == "code" else None, label=label,
                           lines=12, **common)
        if f.kind == "json":
            return gr.Code(value=value, language="json", label=label + " (JSON)", **common)
        if f.kind == "list":
            return gr.Textbox(value=value, label=label + " (one per line)", lines=3, info=info, **common)
        if f.kind == "boolean":
            return gr.Checkbox(value=value, label=label, info=info, **common)
        if f.kind == "enum":
            return gr.Dropdown([str(c) for c in f.choices], value=None if value is None else str(value), label=label,
                               info=info, **common)
        if f.kind in ("integer", "number"):
            return gr.Number(value=value, label=label, precision=0 if f.kind == "integer" else None, info=info,
                             **common)
        return gr.Textbox(value=value, label=label, info=info, **common)

    def _view(self, browser_id: Optional[str], live: Optional[Live], message: str, kind: str = "ok") -> dict:
        ep = live.episode if live else None
        return {self.status: status_html(message, kind), self.summary: _summary(ep), self.episode: _episode_view(ep)}

    def _fail(self, e: Exception) -> dict:
        return {self.status: status_html(str(e), "error")}

    def _human_step(self, browser_id, tool: str, specs: list[FormField], values: list[Any]) -> dict:
        live = LIVE.get(browser_id)
        try:
            if live is None:
                raise TargetError("not connected: type the server's URL and press Connect")
            action = assemble(specs, values)
            with live.lock:
                step = live.human_step(tool, action)
                save(browser_id, live)
        except USER_ERRORS as e:
            return self._fail(e)
        return self._view(browser_id, live, f"Step {step.step}: reward {step.reward}, "
                          f"{'done' if step.done else 'not done'}" + (f" · {step.error}" if step.error else ""),
                          "error" if step.error else "ok")

    def _connect(self, url: str, browser_id: Optional[str], request: Optional[gr.Request] = None):
        if not browser_id:
            return {self.status: status_html("this page has no browser id yet: reload it", "error")}
        try:
            live = LIVE.connect(browser_id, url)
        except TargetError as e:
            return {self.status: status_html(str(e), "error"), self.spec: None, self.info: ""}
        names = list(live.forms())
        return {self.status: status_html(f"Connected to {live.target.name}: press Reset to start an episode.", "ok"),
                self.info: _info(live), self.spec: _forms_spec(live), self.url: live.target.url,
                self.tool: gr.Dropdown(choices=names, value=names[0], visible=len(names) > 1),
                self.summary: "", self.episode: render.episode_html([])}

    def _reset(self, browser_id, seed):
        live = LIVE.get(browser_id)
        try:
            if live is None:
                raise TargetError("not connected: type the server's URL and press Connect")
            seed = (seed or "").strip()
            if seed and not seed.lstrip("-").isdigit():
                raise TargetError(f"the seed must be a whole number or empty, got {seed!r}")
            with live.lock:
                live.reset(int(seed) if seed else None)
                save(browser_id, live)
        except USER_ERRORS as e:
            return self._fail(e)
        return {**self._view(browser_id, live, "Episode started: fill the form and press Step."),
                self.run_a: gr.Dropdown(choices=_run_choices(browser_id))}

    def _model_play(self, browser_id, base_url, model, token, n):
        live = LIVE.get(browser_id)
        try:
            if live is None:
                raise TargetError("not connected: type the server's URL and press Connect")
            settings = ModelSettings.checked(model, base_url, 0.2, 1024)
            steps = max(1, min(int(n or 1), MAX_MODEL_STEPS))
        except Exception as e:
            yield self._fail(e)
            return
        key = resolve_token(token, settings.base_url)
        for i in range(steps):
            try:
                with live.lock:
                    step = live.model_step(settings, key)
                    save(browser_id, live)
            except USER_ERRORS as e:
                yield self._fail(e)
                return
            done = live.episode is not None and live.episode.done
            yield self._view(browser_id, live, f"Model step {step.step}: reward {step.reward}"
                             + (" · episode done" if done else f" ({i + 1}/{steps})"))
            if done:
                return

    def _open(self, run_id):
        ep = runs().get(run_id or "")
        if ep is None:
            return {self.status: status_html("choose a stored run (or the link's episode has expired)", "error")}
        return {self.status: status_html(f"Showing stored run {ep.episode_id} (read-only).", "ok"),
                self.summary: _summary(ep), self.episode: _episode_view(ep)}

    def _export(self, browser_id):
        try:
            episodes = [e for e in runs().episodes(browser_id or "") if e.steps][::-1]
            files = collect_files(episodes)
        except USER_ERRORS as e:
            return {self.status: status_html(str(e), "error")}
        return {self.files: files, self.status: status_html(f"Exported {len(episodes)} episode(s) as results.jsonl, "
                                                            "metadata.json and README.md.", "ok")}

    def _refresh_runs(self, browser_id):
        choices = _run_choices(browser_id)
        return {self.run_a: gr.Dropdown(choices=choices), self.run_b: gr.Dropdown(choices=choices)}

    def _wire(self) -> None:
        connect_out = [self.status, self.info, self.spec, self.url, self.tool, self.summary, self.episode]
        self.connect_btn.click(self._connect, [self.url, self.browser], connect_out)
        self.tool.input(lambda spec, tool: {**spec, "tool": tool} if spec else spec, [self.spec, self.tool], [self.spec])
        self.url.submit(self._connect, [self.url, self.browser], connect_out)
        self.reset_btn.click(self._reset, [self.browser, self.seed], self.play_outputs + [self.run_a]).then(
            self._refresh_runs, [self.browser], [self.run_a, self.run_b])
        play = self.play_btn.click(self._model_play, [self.browser, self.base_url, self.model, self.token,
                                                      self.model_steps], self.play_outputs, concurrency_limit=16)
        play.then(self._refresh_runs, [self.browser], [self.run_a, self.run_b])
        self.stop_btn.click(None, None, None, cancels=[play])
        self.open_btn.click(self._open, [self.run_a], self.play_outputs)
        self.compare_btn.click(lambda a, b: _compare_html(runs().get(a or ""), runs().get(b or "")),
                               [self.run_a, self.run_b], [self.compare])
        self.export_btn.click(self._export, [self.browser], [self.files, self.status])
        self.connect_outputs = connect_out

    # ---- page load: ?env= and ?run= deep links, and a reload finding its session -------------
    def on_load(self, browser_id: Optional[str], request: gr.Request):
        params = dict(request.query_params or {})
        env_url, run_id = (params.get("env") or "").strip(), (params.get("run") or "").strip()
        out: dict = {**self._refresh_runs(browser_id)}
        if run_id:
            out.update(self._open(run_id))
            return out
        live = LIVE.get(browser_id)
        if env_url and (live is None or live.target.url.rstrip("/") != env_url.rstrip("/")):
            out.update(self._connect(env_url, browser_id))
            live = LIVE.get(browser_id)
            if live is not None and live.episode is None:  # the newest stored episode for this server, read-only
                stored = [e for e in runs().episodes(browser_id or "") if e.env_url == live.target.url]
                if stored:
                    out.update({self.summary: _summary(stored[0]), self.episode: _episode_view(stored[0])})
            return out
        if live is not None:
            names = list(live.forms())
            out.update({**self._view(browser_id, live, f"Connected to {live.target.name}."), self.info: _info(live),
                        self.spec: _forms_spec(live), self.url: live.target.url,
                        self.tool: gr.Dropdown(choices=names, value=names[0], visible=len(names) > 1)})
        return out

    def after(self, page_load: Any, tabs: gr.Tabs) -> None:
        """Run after the page's load event (``?env=`` / ``?run=`` select this tab)."""
        outputs = self.connect_outputs + [self.run_a, self.run_b]

        def load(browser_id, request: gr.Request):
            out = self.on_load(browser_id, request)
            params = dict(request.query_params or {})
            if params.get("env") or params.get("run"):
                out[tabs] = gr.Tabs(selected="generic")
            return out

        page_load.then(load, [self.browser], outputs + [tabs], show_progress="hidden")
