"""The Play tab: a person or a model plays an episode; every step gets one verdict.

Model play runs as a server-side job (ui.autoplay): the page follows it, Stop ends it, and a page
that comes back to the same browser follows it again. Player errors (no reply, HTTP errors,
replies without code, oversized code) are shown as such and use no turn.
"""
from __future__ import annotations

from typing import Any, Optional

import gradio as gr

from environment.prompt import starting_template
from environment.tasks import get_task
from ui.audit_panel import AuditPanel
from ui.autoplay import interrupted_autoplay
from ui.markup import status_html
from ui.verdict import verdict_of
from ui.common import (CONCURRENCY, SESSIONS, EpisodeView, checked_seed, checked_task, default_example, example_choices,
                       example_code, guarded, step_of, task_choices)
from ui.play_model import PREFS_KEY, REMEMBER_SETTINGS_JS, ModelPlay
from ui.players import DEFAULT_MODELS, ROUTER_URL, human_turn
from ui.session import busy


# After a step the verdict is what matters: whenever a new step lands in Play (a submission, a model
# step, the tour), bring its verdict into view. Installed once per page load.
FOLLOW_VERDICTS = """() => {
  if (window.kpFollow) return; window.kpFollow = true; let last = null;
  const target = document.querySelector('#play-badges');
  if (!target) return;
  new MutationObserver(() => {
    const b = target.querySelector('.kp-badges[data-step]');
    const key = b && (b.dataset.step + '/' + b.dataset.envMs);
    if (b && key !== last) { last = key; b.scrollIntoView({block: 'center'}); }
  }).observe(target, {subtree: true, childList: true});
}"""
# Ctrl+Enter (Cmd+Enter) in the editor submits the step, in the capture phase so the editor adds no newline.
CTRL_ENTER_SUBMITS = """() => {
  if (window.kpKeys) return; window.kpKeys = true;
  document.addEventListener('keydown', e => {
    if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey) || !e.target.closest || !e.target.closest('#editor')) return;
    e.preventDefault(); e.stopPropagation();
    document.querySelector('#submit-btn')?.click();
  }, true);
}"""
TEMPLATE_NOTE = ("The starting template is the reference renamed to ModelNew: it is correct and as fast as the "
                 "reference, so it scores about 0.75 (0.10 compiled + 0.30 trials + 0.10 correct + 0.50 × 0.5 for "
                 "a 1× speedup). Only a faster kernel earns more.")


def env_episode(request: gr.Request) -> Optional[str]:
    """The play slot's environment episode id (None when its connection is gone)."""
    env = SESSIONS.get(request).slot("play").env
    try:
        return env.state().episode_id if env is not None else None
    except Exception:  # a dropped connection: the label is still stored and counted
        return None


class PlayTab(ModelPlay):
    def __init__(self, first: Any):
        with gr.Row(equal_height=True, elem_id="play-controls"):
            self.demo_btn = gr.Button("▶ Run demo solution", variant="primary", scale=2, elem_id="demo-btn")
            self.tour_btn = gr.Button("3-minute tour", variant="primary", scale=2, elem_id="tour-btn")
            self.task = gr.Dropdown(task_choices(), value=first.id, label="Task", scale=4, elem_id="task")
            self.seed = gr.Number(0, label="Seed", precision=0, scale=1, min_width=90, elem_id="seed")
            self.turns = gr.Slider(1, 10, value=3, step=1, label="Max turns", scale=2, elem_id="max-turns")
            self.new_btn = gr.Button("New episode", scale=1, elem_id="new-episode-btn")
        self.status = gr.HTML(status_html("Pick a task, then submit code, run the demo solution or let a model "
                                            "play."), elem_id="play-status")
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=300):
                with gr.Accordion("Task prompt and reference code", open=False):
                    self.prompt_md = gr.Markdown(first.description, elem_id="task-prompt")
                    self.reference = gr.Code(first.reference_code, language="python", interactive=False,
                                             label="Reference (Model)", elem_id="reference-code")
                self.editor = gr.Code(starting_template(first), language="python", lines=22, max_lines=40,
                                      label="Your ModelNew (Ctrl+Enter submits)", interactive=True,
                                      elem_id="editor")
                with gr.Row(equal_height=True):
                    self.example = gr.Dropdown(example_choices(first.id), value=default_example(first.id),
                                               label="Example: shipped solutions and red-team attacks", scale=3,
                                               elem_id="example-select")
                    self.load_btn = gr.Button("Load into editor", scale=1, elem_id="load-example-btn")
                with gr.Row():
                    self.submit_btn = gr.Button("Submit step", variant="primary", elem_id="submit-btn")
                    self.finish_btn = gr.Button("Submit and finish", elem_id="finish-btn")
                with gr.Accordion("Model player", open=True, elem_id="model-player"):
                    with gr.Row():
                        self.model = gr.Dropdown(list(DEFAULT_MODELS), value=DEFAULT_MODELS[0], allow_custom_value=True,
                                                 label="Model id (list or any id)", scale=3, elem_id="model-id")
                        self.base_url = gr.Textbox(ROUTER_URL, label="API base URL (OpenAI-compatible)", scale=3,
                                                   elem_id="base-url")
                    with gr.Row():
                        self.token = gr.Textbox("", type="password", scale=3, elem_id="token",
                                                label="Token (empty: the Space's HF_TOKEN, router only)")
                        self.temperature = gr.Slider(0.0, 1.5, value=0.2, step=0.05, label="Temperature", scale=2,
                                                     elem_id="temperature")
                        self.max_tokens = gr.Number(2048, label="Max tokens", precision=0, scale=1,
                                                    elem_id="max-tokens")
                    with gr.Row():
                        self.model_btn = gr.Button("Model step", elem_id="model-step-btn")
                        self.auto_btn = gr.Button("Auto-play to the end", variant="primary", elem_id="autoplay-btn")
                        self.stop_btn = gr.Button("Stop", variant="stop", elem_id="stop-btn")
                        self.continue_btn = gr.Button("Continue auto-play", variant="primary", visible=False,
                                                      elem_id="continue-btn")
            with gr.Column(scale=6, min_width=300):
                self.view = EpisodeView("play", "timeline", "timeline-plot", "episode-summary", "step-pick",
                                        progress=True)
                self.audit = AuditPanel("play")
        self.task_shown = gr.State(first.id)  # the task the editor and prompt belong to
        self.prefs = gr.BrowserState(None, storage_key=PREFS_KEY, secret=PREFS_KEY)  # model settings, never the token
        self.outputs = ([self.status, self.prompt_md, self.reference, self.editor, self.example, self.continue_btn,
                         self.task_shown] + self.view.components)
        self.restore_outputs = self.outputs + [self.task, self.seed, self.turns, self.model, self.base_url,
                                               self.temperature, self.max_tokens]
        self.model_inputs = [self.task, self.seed, self.turns, self.model, self.base_url, self.token,
                             self.temperature, self.max_tokens]
        self._wire()

    # ---- views ---------------------------------------------------------------------------------

    def episode(self, session: Any, step: Any, message: str, kind: str = "ok", progress: bool = False) -> dict:
        """The status line and the episode view; ``progress`` repeats the line next to the step (a model
        or the tour playing: the status line may have scrolled away)."""
        handle = session.slot("play")
        record = handle.record
        if session.save_error:
            message, kind = f"{message} ({session.save_error})", "error"
        cut = session.interrupted  # Continue auto-play: only for the interrupted episode on show
        out = {self.status: status_html(message, kind),
               self.view.progress: status_html(message, kind) if progress else "",
               self.continue_btn: gr.Button(visible=bool(cut and not session.running and record is not None
                                                         and record.episode_id == cut))}
        if record is not None:
            state = "model playing" if session.running else ("episode over" if handle.done else "episode running")
            out.update(self.view.values(record, step, state))
        return out

    def restore(self, session: Any) -> dict:
        """What a page (re)loaded by this browser shows: the episode in play, its last step and code."""
        handle = session.slot("play")
        record = handle.record
        if record is None or (session.interrupted == record.episode_id and not session.running):
            cut = interrupted_autoplay(session)
            if cut is not None:
                return self.interrupted(session, *cut)
            job = session.job
            if record is not None and job is not None and job.interrupted and job.handle.record is record:
                return self.interrupted(session, record, job.settings_dict, job.interrupted)
        if record is None:
            from ui.store import store
            runs = store().runs(session.browser_id) if session.browser_id else []
            if not runs:
                return {}
            return {self.status: status_html(f"Welcome back: {len(runs)} stored episode(s) of this browser are "
                                               "in the Runs tab.", "info")}
        step = record.steps[-1] if record.steps else None
        if session.running:
            message, kind = session.job.message, session.job.kind
        else:
            message, kind = (f"Welcome back: your {record.task_id} episode is as you left it "
                             f"({len(record.steps)} step(s)).", "info")
        out = self.episode(session, step, message, kind)
        out.update(self.show_task(record.task_id))
        out.update({self.seed: record.seed, self.turns: record.max_turns})
        last_code = next((s.code for s in reversed(record.steps) if s.code), None)
        if last_code:
            out[self.editor] = last_code
        return out

    def show_task(self, task_id: str) -> dict:
        """The Task list, the editor's task, prompt, reference and examples, all on ``task_id``."""
        t = get_task(task_id)
        return {self.task: t.id, self.task_shown: t.id, self.prompt_md: t.description,
                self.reference: t.reference_code,
                self.example: gr.Dropdown(choices=example_choices(t.id), value=default_example(t.id))}

    # ---- handlers ------------------------------------------------------------------------------

    def _wire(self) -> None:
        status, view = self.status, self.view

        def ensure_episode(session, task_id: str, seed: int, turns: int) -> tuple[Any, str]:
            handle = session.slot("play")
            rec = handle.record
            if rec is None or handle.done or rec.task_id != task_id or rec.seed != seed or rec.max_turns != turns:
                why = " (the last one was over)" if rec is not None and handle.done else ""
                handle.reset(task_id, seed, turns, player="human")
                session.started(handle.record)
                return handle, f"Started a new episode on {task_id} (seed {seed}, {turns} turns){why}."
            return handle, ""

        model = self.model_handlers(ensure_episode)

        @guarded(status)
        def on_new(task_id, seed_value, turns_value, request: gr.Request):
            task_id, s = checked_task(task_id), checked_seed(seed_value)
            session = SESSIONS.get(request)
            with busy(session):
                handle = session.slot("play")
                handle.reset(task_id, s, int(turns_value), player="human")
                session.started(handle.record)
            out = self.episode(session, None, f"New episode on {task_id} with seed {s}: submit your code.")
            t = get_task(task_id)
            out.update({self.prompt_md: handle.obs.prompt, self.reference: t.reference_code})
            return out

        def submit(code, task_id, seed_value, turns_value, finish: bool, request: gr.Request) -> dict:
            task_id, s = checked_task(task_id), checked_seed(seed_value)
            session = SESSIONS.get(request)
            with busy(session):
                handle, note = ensure_episode(session, task_id, s, int(turns_value))
                step = human_turn(handle, code, finish=bool(finish))
            verdict = verdict_of(step)
            template = code.strip() == starting_template(get_task(task_id)).strip()
            out = self.episode(session, step, " ".join(x for x in (note, f"Step {step.step}: {verdict.title}",
                                                                   TEMPLATE_NOTE if template else "") if x),
                               verdict.style)
            out[self.prompt_md] = handle.obs.prompt if handle.obs else get_task(task_id).description
            return out

        @guarded(status)
        def on_submit(code, task_id, seed_value, turns_value, request: gr.Request):
            return submit(code, task_id, seed_value, turns_value, False, request)

        @guarded(status)
        def on_finish(code, task_id, seed_value, turns_value, request: gr.Request):
            return submit(code, task_id, seed_value, turns_value, True, request)

        @guarded(status)
        def on_task_change(task_id, code, shown, request: gr.Request):
            """Only a new value changes the task (opening the list and leaving it, or tabbing through it,
            changes nothing); the editor's code is kept per task and comes back with its task."""
            task_id = checked_task(task_id)
            if task_id == shown:
                return {status: gr.skip()}  # (an empty dict would read as one value)
            t = get_task(task_id)
            session = SESSIONS.get(request)
            edited = bool(shown and code and code.strip() != starting_template(get_task(shown)).strip())
            if edited:
                session.drafts[shown] = code
            handle = session.slot("play")
            old = handle.record
            note = ""
            if old is not None and old.task_id != task_id and not session.running:
                note = (f" Your {old.task_id} episode ({len(old.steps)} step(s)) is saved: reopen it from Runs."
                        if old.steps else "")
                handle.record, handle.done = None, True
            draft = session.drafts.get(task_id)
            if edited:
                note += f" Your {shown} code is kept: choose {shown} again to get it back."
            what = "the code you last edited for it." if draft else f"a starting template. {TEMPLATE_NOTE}"
            out = self.show_task(task_id)
            del out[self.task]  # the list already shows it
            out.update({self.editor: draft or starting_template(t),
                        status: status_html(f"{task_id}: the editor holds {what} Submit to start an episode.{note}",
                                            "info")})
            if not session.running:
                out.update(view.values(None, None))
            return out

        @guarded(status)
        def on_load_example(task_id, key):
            code = example_code(checked_task(task_id), key)
            return {self.editor: code, status: status_html(f"Loaded {key} into the editor.", "info")}

        @guarded(status)
        def on_demo(task_id):
            """The task's shipped demo solution, whichever example the list shows."""
            task_id = checked_task(task_id)
            key = default_example(task_id)
            return {self.editor: example_code(task_id, key), self.example: gr.Dropdown(value=key),
                    status: status_html(f"Loaded the demo solution {key} into the editor.", "info")}

        @guarded(status)
        def on_pick(n, request: gr.Request):
            handle = SESSIONS.get(request).slot("play")
            return view.insp.values(handle.record, step_of(handle.record, n))

        @guarded(status)
        def on_row(evt: gr.SelectData, request: gr.Request):
            return view.row_step(SESSIONS.get(request).slot("play").record, evt)

        # One progress indicator (on the status line), not an overlay on each of the ~25 outputs.
        common = dict(concurrency_limit=CONCURRENCY, show_progress_on=[status])
        everything = self.outputs
        episode_in = [self.task, self.seed, self.turns]
        self.new_btn.click(on_new, episode_in, everything, api_name="new_episode", **common)
        self.submit_btn.click(on_submit, [self.editor] + episode_in, everything, api_name="submit_step", **common)
        self.finish_btn.click(on_finish, [self.editor] + episode_in, everything, api_name="submit_and_finish",
                              **common)
        self.model_btn.click(model.model_step, self.model_inputs, everything, api_name="model_step", **common)
        self.auto_btn.click(model.autoplay, self.model_inputs, everything, api_name="autoplay", **common)
        self.continue_btn.click(model.continue_autoplay, self.model_inputs[3:], everything,
                                api_name="continue_autoplay", **common)
        self.stop_btn.click(model.stop, None, [status], api_name="stop", queue=False)
        self.task.input(on_task_change, [self.task, self.editor, self.task_shown], everything, api_name="choose_task",
                        show_progress_on=[status])
        settings_in = [self.model, self.base_url, self.temperature, self.max_tokens]
        for box in settings_in:  # kept in the browser (localStorage): a reload keeps them. Made in the page (js, no
            # server round trip), so quick successive changes are kept in the order they were made
            box.change(None, settings_in, [self.prefs], js=REMEMBER_SETTINGS_JS, show_progress="hidden")
        self.load_btn.click(on_load_example, [self.task, self.example], everything, api_name="load_example",
                            show_progress_on=[status])
        self.demo_btn.click(on_demo, [self.task], everything, show_progress_on=[status]).then(
            on_submit, [self.editor] + episode_in, everything, **common)
        self.tour_btn.click(model.tour, self.model_inputs, self.restore_outputs, api_name="tour", **common)
        view.step_pick.input(on_pick, [view.step_pick], everything, api_name="inspect_step",
                             show_progress_on=[status])
        view.timeline.select(on_row, None, everything, show_progress_on=[status])
        self.audit.wire(view.step_pick, lambda request: SESSIONS.get(request).slot("play").record,
                        lambda request, record: SESSIONS.get(request).save(record), env_episode)
