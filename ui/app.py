"""The Kernel Playground: Gradio Blocks mounted at /web by openenv's create_app(gradio_builder=...).

Tabs: Play (a person or a model plays an episode, each step inspected), Compare (two players on
the same task and seed), Replay (an exported file, step by step, nothing re-run) and Export
(JSONL / Parquet / Hub dataset). Every browser session plays its own environments (ui.session).
"""
import functools
import inspect
import logging
from typing import Any, Callable, Optional

import gradio as gr

from environment.prompt import starting_template
from environment.tasks import get_task
from environment.tasks.registry import listing
from environment.trajectory import EpisodeRecord, StepRecord
from ui import compare as cmp
from ui import monitor as monitor_view
from ui import render as R
from ui.players import (DEFAULT_MODELS, ROUTER_URL, ModelSettings, human_turn, model_turn, resolve_token,
                        typed_token)
from ui.replay_export import episode_label, export_files, load_replay, push
from ui.session import PlayError, Sessions, busy
from ui.style import HEADER

log = logging.getLogger("kernel_playground")
DEFAULT_TASK = "gelu_bias"
MAX_SEED = 2**31 - 1
CONCURRENCY = 32  # handlers mostly wait on the environment or a model endpoint
SESSIONS = Sessions()


# ---- small helpers ----------------------------------------------------------------------------

def task_choices() -> list[tuple[str, str]]:
    """Every task, generated ones, then problems that could not load (marked, with their reason)."""
    return [(f"{t['id']} — {t['title']} ({t['difficulty']}{', graded' if t['graded'] else ''})"
             if t.get("available", True) else f"⊘ {t['id']} — unavailable: {t['reason'][:90]}", t["id"])
            for t in listing()]


def example_choices(task_id: str) -> list[tuple[str, str]]:
    task = get_task(task_id)
    out = []
    for kind in ("correct", "wrong"):
        for path in task.solutions.get(kind, ()):
            out.append((f"{kind}: {path.stem}", f"{kind}/{path.name}"))
    return out


def default_example(task_id: str) -> Optional[str]:
    choices = [v for _, v in example_choices(task_id)]
    for prefix in ("correct/triton_", "correct/"):
        for v in choices:
            if v.startswith(prefix):
                return v
    return choices[0] if choices else None


def example_code(task_id: str, key: Optional[str]) -> str:
    task = get_task(task_id)
    kind, _, name = (key or "").partition("/")
    for path in task.solutions.get(kind, ()):
        if path.name == name:
            return path.read_text()
    raise PlayError(f"no example {key!r} for {task_id}")


def checked_seed(seed: Any) -> int:
    if seed is None or seed == "":
        raise PlayError("enter a seed: a whole number from 0 to 2147483647")
    try:
        value = float(seed)
    except (TypeError, ValueError):
        raise PlayError(f"the seed must be a whole number, got {seed!r}") from None
    if value != int(value) or not 0 <= value <= MAX_SEED:
        raise PlayError(f"the seed must be a whole number from 0 to {MAX_SEED}, got {seed}")
    return int(value)


def checked_task(task_id: Any) -> str:
    try:
        return get_task(str(task_id)).id
    except KeyError as exc:
        if "is unavailable" in str(exc.args[0]):
            raise PlayError(str(exc.args[0])) from None
        raise PlayError(f"unknown task {task_id!r}: pick one from the list") from None


def guarded(status: gr.components.Component) -> Callable:
    """Every handler shows problems in ``status`` as one clear line; never a traceback in the page."""

    def wrap(fn: Callable) -> Callable:
        def problem(e: Exception) -> dict:
            if isinstance(e, PlayError):
                return {status: R.status_html(str(e), "error")}
            log.exception("playground handler %s failed", fn.__name__)
            return {status: R.status_html(f"Something went wrong ({type(e).__name__}); the session is still "
                                          "usable, try again.", "error")}

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args: Any, **kwargs: Any):
                try:
                    yield from fn(*args, **kwargs)
                except Exception as e:
                    yield problem(e)
            return gen

        @functools.wraps(fn)
        def plain(*args: Any, **kwargs: Any):
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                return problem(e)
        return plain
    return wrap


# ---- the step inspector (used by Play and Replay) -------------------------------------------

class Inspector:
    """Components that show one step; ``values`` renders a step into them, in order."""

    def __init__(self, prefix: str):
        self.header = gr.Markdown("### No step yet", elem_id=f"{prefix}-step-header")
        self.badges = gr.HTML(R.badges_html(None), elem_id=f"{prefix}-badges")
        self.breakdown = gr.HTML(R.breakdown_chart_html(None), elem_id=f"{prefix}-breakdown-chart")
        self.timing = gr.HTML(R.timing_chart_html(None), elem_id=f"{prefix}-timing-chart")
        self.flags = gr.HTML("", elem_id=f"{prefix}-flags")
        self.feedback = gr.Textbox(label="Feedback", lines=5, max_lines=14, interactive=False,
                                   elem_id=f"{prefix}-feedback")
        with gr.Accordion("Mismatches (first differing elements)", open=True):
            self.mismatch_md = gr.Markdown("", elem_id=f"{prefix}-mismatch-summary")
            self.mismatch = gr.Dataframe(R.mismatch_frame(None), interactive=False, max_height=240,
                                         elem_id=f"{prefix}-mismatch")
        with gr.Accordion("Compile / runtime log", open=False):
            self.log = gr.Textbox(show_label=False, lines=6, max_lines=20, interactive=False, elem_id=f"{prefix}-log")
        with gr.Accordion("Code of this step", open=False):
            self.code = gr.Code(language="python", interactive=False, elem_id=f"{prefix}-code")
        with gr.Accordion("Model prompt and raw reply", open=False):
            self.prompt = gr.Textbox(label="Prompt the model saw", lines=8, max_lines=30, interactive=False,
                                     elem_id=f"{prefix}-prompt")
            self.reply = gr.Textbox(label="Raw reply", lines=8, max_lines=30, interactive=False,
                                    elem_id=f"{prefix}-reply")
        with gr.Accordion("Raw observation JSON", open=False):
            self.json = gr.JSON(elem_id=f"{prefix}-json")

    @property
    def components(self) -> list:
        return [self.header, self.badges, self.timing, self.breakdown, self.flags, self.feedback, self.mismatch_md,
                self.mismatch, self.log, self.code, self.prompt, self.reply, self.json]

    def values(self, record: Optional[EpisodeRecord], step: Optional[StepRecord]) -> dict:
        vals = [R.step_header(step, record), R.badges_html(step), R.timing_chart_html(step),
                R.breakdown_chart_html(step), R.flags_html(step) if step else "", R.feedback_text(step),
                R.mismatch_summary(step), R.mismatch_frame(step), R.log_text(step), step.code if step and step.code
                else "", R.prompt_text(step) if step else "", R.reply_text(step) if step else "",
                R.observation_json(step)]
        return dict(zip(self.components, vals))


def step_of(record: Optional[EpisodeRecord], n: Any) -> Optional[StepRecord]:
    if record is None or not record.steps:
        return None
    try:
        n = int(n)
    except (TypeError, ValueError):
        return record.steps[-1]
    return next((s for s in record.steps if s.step == n), record.steps[-1])


# ---- the page ---------------------------------------------------------------------------------

def build_playground(web_manager: Any = None, action_fields: Any = None, metadata: Any = None,
                     is_chat_env: bool = False, title: str = "Kernel Playground",
                     quick_start_md: Optional[str] = None) -> gr.Blocks:
    """openenv's gradio_builder signature; ``web_manager`` (one env shared by all) is not used for play."""
    first = get_task(DEFAULT_TASK)
    with gr.Blocks(title=title or "Kernel Playground", fill_width=True, delete_cache=(3600, 7200)) as demo:
        gr.HTML(HEADER, elem_id="kp-header")
        with gr.Tabs(elem_id="tabs"):
            with gr.Tab("Play", id="play", elem_id="tab-play"):
                play = _play_tab(first)
            with gr.Tab("Compare", id="compare", elem_id="tab-compare"):
                _compare_tab(play)
            with gr.Tab("Replay", id="replay", elem_id="tab-replay"):
                _replay_tab()
            with gr.Tab("Export", id="export", elem_id="tab-export"):
                _export_tab()
            if monitor_view.enabled():  # KERNEL_ENV_MONITOR=1: every session's episodes (ui/monitor.py)
                with gr.Tab("Monitor", id="monitor", elem_id="tab-monitor"):
                    monitor_view.monitor_tab(Inspector, step_of)
            if quick_start_md:
                with gr.Tab("API quick start", id="api", elem_id="tab-api"):
                    gr.Markdown(quick_start_md)
        demo.unload(_drop_session)
    demo.queue(default_concurrency_limit=CONCURRENCY)
    return demo


def _drop_session(request: gr.Request) -> None:
    SESSIONS.drop(request)


def _play_tab(first: Any) -> dict:
    with gr.Row(equal_height=True):
        task = gr.Dropdown(task_choices(), value=first.id, label="Task", scale=4, elem_id="task")
        seed = gr.Number(0, label="Seed", precision=0, scale=1, elem_id="seed")
        turns = gr.Slider(1, 10, value=3, step=1, label="Max turns", scale=2, elem_id="max-turns")
        new_btn = gr.Button("New episode", scale=1, elem_id="new-episode-btn")
    status = gr.HTML(R.status_html("Pick a task, then submit code, run the demo solution or let a model play."),
                     elem_id="play-status")
    with gr.Row(equal_height=False):
        with gr.Column(scale=5):
            with gr.Accordion("Task prompt and reference code", open=False):
                prompt_md = gr.Markdown(first.description, elem_id="task-prompt")
                reference = gr.Code(first.reference_code, language="python", interactive=False,
                                    label="Reference (Model)", elem_id="reference-code")
            editor = gr.Code(starting_template(first), language="python", lines=22, max_lines=40,
                             label="Your ModelNew", interactive=True, elem_id="editor")
            with gr.Row(equal_height=True):
                example = gr.Dropdown(example_choices(first.id), value=default_example(first.id),
                                      label="Shipped example", scale=3, elem_id="example-select")
                load_btn = gr.Button("Load into editor", scale=1, elem_id="load-example-btn")
                demo_btn = gr.Button("Run demo solution", variant="primary", scale=1, elem_id="demo-btn")
            with gr.Row():
                submit_btn = gr.Button("Submit step", variant="primary", elem_id="submit-btn")
                finish_btn = gr.Button("Submit and finish", elem_id="finish-btn")
            with gr.Accordion("Model player", open=True, elem_id="model-player"):
                with gr.Row():
                    model = gr.Dropdown(list(DEFAULT_MODELS), value=DEFAULT_MODELS[0], allow_custom_value=True,
                                        label="Model id (list or any id)", scale=3, elem_id="model-id")
                    base_url = gr.Textbox(ROUTER_URL, label="API base URL (OpenAI-compatible)", scale=3,
                                          elem_id="base-url")
                with gr.Row():
                    token = gr.Textbox("", type="password", label="Token (empty: the Space's HF_TOKEN, router only)", scale=3,
                                       elem_id="token")
                    temperature = gr.Slider(0.0, 1.5, value=0.2, step=0.05, label="Temperature", scale=2,
                                            elem_id="temperature")
                    max_tokens = gr.Number(2048, label="Max tokens", precision=0, scale=1,
                                           elem_id="max-tokens")
                with gr.Row():
                    model_btn = gr.Button("Model step", elem_id="model-step-btn")
                    auto_btn = gr.Button("Auto-play to the end", variant="primary", elem_id="autoplay-btn")
                    stop_btn = gr.Button("Stop", variant="stop", elem_id="stop-btn")
        with gr.Column(scale=6):
            episode_md = gr.Markdown("### No episode yet", elem_id="episode-summary")
            plot = gr.HTML(R.scores_chart_html([]), elem_id="timeline-plot")
            timeline = gr.Dataframe(R.timeline_frame(None), interactive=False, max_height=220,
                                    label="Episode timeline (click a row to inspect that step)", elem_id="timeline")
            step_pick = gr.Radio([], label="Inspect step", elem_id="step-pick")
            insp = Inspector("play")

    ep_outputs = [status, episode_md, plot, timeline, step_pick, prompt_md, reference] + insp.components

    def episode_view(handle, record: Optional[EpisodeRecord], step: Optional[StepRecord], message: str,
                     kind: str = "ok") -> dict:
        out = {status: R.status_html(message, kind)}
        if record is None:
            return out
        done = "over" if handle is not None and handle.done else "running"
        out[episode_md] = (f"### {record.task_id} · seed {record.seed} · {R.player_name(record)}\n"
                           f"Steps {len(record.steps)} of {record.max_turns} · best score **{record.score:.2f}** · "
                           f"episode {done}")
        out[plot] = R.scores_chart_html([("episode", record)])
        out[timeline] = R.timeline_frame(record)
        out[step_pick] = gr.Radio(choices=[s.step for s in record.steps], value=step.step if step else None)
        out.update(insp.values(record, step))
        return out

    def task_info(task_id: str) -> dict:
        t = get_task(task_id)
        return {prompt_md: t.description, reference: t.reference_code}

    def ensure_episode(session, task_id: str, seed: int, turns: int) -> tuple[Any, str]:
        handle = session.slot("play")
        rec = handle.record
        if rec is None or handle.done or rec.task_id != task_id or rec.seed != seed or rec.max_turns != turns:
            why = "the last one was over" if rec is not None and handle.done else None
            handle.reset(task_id, seed, turns, player="human")
            session.started(handle.record)
            note = f"Started a new episode on {task_id} (seed {seed}, {turns} turns)"
            return handle, note + (f" ({why})." if why else ".")
        return handle, ""

    @guarded(status)
    def on_new(task_id, seed_value, turns_value, request: gr.Request):
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        session = SESSIONS.get(request)
        with busy(session):
            handle = session.slot("play")
            handle.reset(task_id, s, int(turns_value), player="human")
            session.started(handle.record)
        out = episode_view(handle, handle.record, None, f"New episode on {task_id} with seed {s}: submit your code.")
        out.update(task_info(task_id))
        out[prompt_md] = handle.obs.prompt
        return out

    def submit(code, task_id, seed_value, turns_value, finish: bool, request: gr.Request) -> dict:
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        session = SESSIONS.get(request)
        with busy(session):
            handle, note = ensure_episode(session, task_id, s, int(turns_value))
            step = human_turn(handle, code, finish=bool(finish))
        message = f"Step {step.step}: {R.score_text(step.reward)}" + (f" — {step.error}" if step.error else "")
        out = episode_view(handle, handle.record, step, " ".join(x for x in (note, message) if x),
                           "error" if step.error and not (step.observation or {}).get("compiled") else "ok")
        out[prompt_md] = handle.obs.prompt if handle.obs else out.get(prompt_md)
        return out

    def model_settings(model_id, url, temp, max_tok) -> ModelSettings:
        return ModelSettings.checked(model_id, url, temp, max_tok)

    @guarded(status)
    def on_submit(code, task_id, seed_value, turns_value, request: gr.Request):
        return submit(code, task_id, seed_value, turns_value, False, request)

    @guarded(status)
    def on_finish(code, task_id, seed_value, turns_value, request: gr.Request):
        return submit(code, task_id, seed_value, turns_value, True, request)

    def one_model_step(session, task_id, s, turns_value, settings, tok) -> tuple:
        with busy(session):
            handle, note = ensure_episode(session, task_id, s, int(turns_value))
            step = model_turn(handle, settings, tok)
        if step.code is None:
            message, kind = f"Step {step.step}: the model gave no usable code — {step.error}", "error"
        else:
            message, kind = f"Step {step.step}: {settings.model}: {R.score_text(step.reward)}", "ok"
        message = " ".join(x for x in (note, message) if x)
        out = episode_view(handle, handle.record, step, message, kind)
        if step.code is not None:
            out[editor] = step.code
        return handle, out, message, kind

    @guarded(status)
    def on_model_step(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        settings = model_settings(model_id, url, temp, max_tok)
        session = SESSIONS.get(request)
        session.stop_requested = False
        return one_model_step(session, task_id, s, turns_value, settings, resolve_token(tok, settings.base_url))[1]

    @guarded(status)
    def on_autoplay(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
        task_id, s = checked_task(task_id), checked_seed(seed_value)
        settings = model_settings(model_id, url, temp, max_tok)
        token_value = resolve_token(tok, settings.base_url)
        session = SESSIONS.get(request)
        session.stop_requested = False
        yield {status: R.status_html(f"Auto-play: {settings.model} is writing step 1…", "busy")}
        while True:
            handle, out, message, kind = one_model_step(session, task_id, s, turns_value, settings, token_value)
            if handle.done or session.stop_requested:
                end = ("auto-play stopped" if not handle.done else
                       f"episode over, best score {handle.record.score:.2f}")
                out[status] = R.status_html(f"{message} — {end}.", kind)
                yield out
                return
            out[status] = R.status_html(f"Auto-play: step {len(handle.record.steps)} done "
                                        f"({R.score_text(handle.record.steps[-1].reward)}); "
                                        f"{settings.model} is writing the next one…", "busy")
            yield out

    def on_stop(request: gr.Request):
        session = SESSIONS.get(request)
        session.stop_requested = True
        return {status: R.status_html("Stopping after the step in progress.", "info")}

    @guarded(status)
    def on_task_change(task_id):
        task_id = checked_task(task_id)
        t = get_task(task_id)
        return {prompt_md: t.description, reference: t.reference_code, editor: starting_template(t),
                example: gr.Dropdown(choices=example_choices(task_id), value=default_example(task_id)),
                status: R.status_html(f"{task_id}: the editor holds a starting template (the reference renamed to "
                                      "ModelNew). Submit to start an episode.", "info")}

    @guarded(status)
    def on_load_example(task_id, key):
        code = example_code(checked_task(task_id), key)
        return {editor: code, status: R.status_html(f"Loaded {key} into the editor.", "info")}

    @guarded(status)
    def on_pick(n, request: gr.Request):
        handle = SESSIONS.get(request).slot("play")
        return insp.values(handle.record, step_of(handle.record, n))

    @guarded(status)
    def on_row(evt: gr.SelectData, request: gr.Request):
        handle = SESSIONS.get(request).slot("play")
        record = handle.record
        if record is None or not record.steps:
            return {}
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        step = record.steps[min(int(row), len(record.steps) - 1)]
        out = insp.values(record, step)
        out[step_pick] = gr.Radio(value=step.step)
        return out

    # One progress indicator (on the status line), not an overlay on each of the ~25 outputs.
    common = dict(concurrency_limit=CONCURRENCY, show_progress_on=[status])
    everything = ep_outputs + [editor, example]
    new_btn.click(on_new, [task, seed, turns], everything, api_name="new_episode", **common)
    submit_btn.click(on_submit, [editor, task, seed, turns], everything, api_name="submit_step", **common)
    finish_btn.click(on_finish, [editor, task, seed, turns], everything, api_name="submit_and_finish", **common)
    model_inputs = [task, seed, turns, model, base_url, token, temperature, max_tokens]
    model_btn.click(on_model_step, model_inputs, everything, api_name="model_step", **common)
    auto_ev = auto_btn.click(on_autoplay, model_inputs, everything, api_name="autoplay", **common)
    stop_btn.click(on_stop, None, [status], cancels=[auto_ev], api_name="stop", queue=False)
    task.input(on_task_change, [task], everything, api_name="choose_task", show_progress_on=[status])
    load_btn.click(on_load_example, [task, example], everything, api_name="load_example", show_progress_on=[status])
    demo_btn.click(on_load_example, [task, example], everything, show_progress_on=[status]).then(
        on_submit, [editor, task, seed, turns], everything, **common)
    step_pick.input(on_pick, [step_pick], everything, api_name="inspect_step", show_progress_on=[status])
    timeline.select(on_row, None, everything, show_progress_on=[status])
    return dict(task=task, seed=seed, turns=turns, model=model, base_url=base_url, token=token,
                temperature=temperature, max_tokens=max_tokens, status=status)


def _compare_tab(play: dict) -> None:
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
                head_text += f"\nbest score **{record.score:.2f}** over {len(record.steps)} step(s)"
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

    run_btn.click(on_run, [side_a, side_b, play["task"], play["seed"], play["turns"], play["model"], play["base_url"],
                           play["token"], play["temperature"], play["max_tokens"]], outputs, api_name="compare",
                  concurrency_limit=CONCURRENCY)


def _replay_tab() -> None:
    gr.Markdown("Load an exported episode file (.jsonl or .parquet from the Export tab or `inference.py --output`) "
                "and step through it. Nothing is re-run: every view comes from the file.")
    with gr.Row():
        upload = gr.File(label="Episode file", file_types=[".jsonl", ".parquet", ".json"], elem_id="replay-file",
                         scale=2)
        with gr.Column(scale=3):
            status = gr.HTML(R.status_html("No file loaded."), elem_id="replay-status")
            episode = gr.Dropdown([], label="Episode", elem_id="replay-episode")
            step_pick = gr.Radio([], label="Step", elem_id="replay-step")
    with gr.Row():
        plot = gr.HTML(R.scores_chart_html([]), elem_id="replay-plot")
        timeline = gr.Dataframe(R.timeline_frame(None), interactive=False, max_height=220, elem_id="replay-timeline")
    insp = Inspector("replay")
    outputs = [status, episode, step_pick, plot, timeline] + insp.components

    def show(records, i: int, n: Any = None) -> dict:
        record = records[i]
        step = step_of(record, n) if n is not None else (record.steps[0] if record.steps else None)
        out = {episode: gr.Dropdown(choices=[(episode_label(k, r), k) for k, r in enumerate(records)], value=i),
               step_pick: gr.Radio(choices=[s.step for s in record.steps], value=step.step if step else None),
               plot: R.scores_chart_html([("episode", record)]), timeline: R.timeline_frame(record)}
        out.update(insp.values(record, step))
        return out

    @guarded(status)
    def on_upload(path, request: gr.Request):
        session = SESSIONS.get(request)
        session.replay = []
        records = load_replay(path)
        session.replay = records
        out = show(records, 0)
        out[status] = R.status_html(f"Loaded {len(records)} episode(s); showing step 1 of the first.", "ok")
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


def _export_tab() -> None:
    gr.Markdown("Every episode this browser session played (Play and Compare), one record per episode: task, seed, "
                "player, per-step records (code, observation, reward, model prompt and reply) and the TRL-ready "
                "`messages` (system/user/assistant) and `prompt` columns. Load them with "
                "`datasets.load_dataset(\"json\" | \"parquet\", data_files=...)`. Tokens are never written.")
    with gr.Row():
        export_btn = gr.Button("Prepare export", variant="primary", elem_id="export-btn")
        dl_jsonl = gr.DownloadButton("Download JSONL", interactive=False, elem_id="download-jsonl")
        dl_parquet = gr.DownloadButton("Download Parquet", interactive=False, elem_id="download-parquet")
    status = gr.HTML(R.status_html("Press Prepare export after playing."), elem_id="export-status")
    gr.Markdown("#### Push to a Hugging Face dataset")
    with gr.Row():
        repo = gr.Textbox(label="Dataset repo id (owner/name)", elem_id="hub-repo")
        hub_token = gr.Textbox(label="Write token (yours; the Space's token is never used)", type="password",
                               elem_id="hub-token")
        private = gr.Checkbox(True, label="Private")
        push_btn = gr.Button("Push", elem_id="hub-push-btn")
    hub_status = gr.HTML("", elem_id="hub-status")

    @guarded(status)
    def on_export(request: gr.Request):
        records = SESSIONS.get(request).exportable()
        jsonl, parquet = export_files(records)
        return {dl_jsonl: gr.DownloadButton(value=str(jsonl), interactive=True),
                dl_parquet: gr.DownloadButton(value=str(parquet), interactive=True),
                status: R.status_html(f"{len(records)} episode(s) ready: {jsonl.name} and {parquet.name}.", "ok")}

    @guarded(hub_status)
    def on_push(repo_id, tok, is_private, request: gr.Request):
        records = SESSIONS.get(request).exportable()
        url = push(records, repo_id, typed_token(tok), bool(is_private))
        return {hub_status: R.status_html(f"Pushed {len(records)} episode(s): {url}", "ok")}

    export_btn.click(on_export, None, [dl_jsonl, dl_parquet, status], api_name="export")
    push_btn.click(on_push, [repo, hub_token, private], [hub_status], api_name="push_to_hub",
                   concurrency_limit=4)
