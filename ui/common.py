"""What every tab shares: the sessions, input checks, the error guard and the step inspector."""
import functools
import inspect
import logging
from typing import Any, Callable, Optional

import gradio as gr

from environment.tasks import get_task
from environment.tasks.registry import listing
from environment.trajectory import EpisodeRecord, StepRecord
from ui import gallery
from ui.charts import breakdown_chart_html, scores_chart_html, timing_chart_html
from ui.episode_view import timeline_frame
from ui.markup import status_html
from ui.step_view import (
    badges_html, feedback_text, flags_html, log_text, mismatch_frame, mismatch_summary, observation_json,
    player_name, prompt_text, reply_text, step_diff, step_header)
from ui.verdict import num
from ui.session import PlayError, Sessions

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
    """The task's shipped solutions (correct and wrong) and the red-team attacks aimed at it."""
    task = get_task(task_id)
    out = []
    for kind in ("correct", "wrong"):
        for path in task.solutions.get(kind, ()):
            out.append((f"{kind}: {path.stem}", f"{kind}/{path.name}"))
    out += [(f"attack: {a.name} (" + ("harmless: earns no more than honest work" if a.verdict == "harmless" else
                                    "OPEN: not stopped yet" if a.verdict == "open" else a.layer) + ")",
             f"attack/{a.file}") for a in gallery.for_task(task.id)]
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
    if kind == "attack":
        try:
            return gallery.by_name(name).code()
        except KeyError:
            raise PlayError(f"no attack {name!r} in tests/redteam/attacks") from None
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
                return {status: status_html(str(e), "error")}
            log.exception("playground handler %s failed", fn.__name__)
            return {status: status_html(f"Something went wrong ({type(e).__name__}); the session is still "
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
        self.badges = gr.HTML(badges_html(None), elem_id=f"{prefix}-badges")
        self.breakdown = gr.HTML(breakdown_chart_html(None), elem_id=f"{prefix}-breakdown-chart")
        self.timing = gr.HTML(timing_chart_html(None), elem_id=f"{prefix}-timing-chart")
        self.flags = gr.HTML("", elem_id=f"{prefix}-flags")
        self.feedback = gr.Textbox(label="Feedback", lines=5, max_lines=14, interactive=False,
                                   elem_id=f"{prefix}-feedback")
        with gr.Accordion("Mismatches (first differing elements)", open=True):
            self.mismatch_md = gr.Markdown("", elem_id=f"{prefix}-mismatch-summary")
            self.mismatch = gr.Dataframe(mismatch_frame(None), interactive=False, max_height=240,
                                         elem_id=f"{prefix}-mismatch")
        with gr.Accordion("Compile / runtime log", open=False):
            self.log = gr.Textbox(show_label=False, lines=6, max_lines=20, interactive=False, elem_id=f"{prefix}-log")
        with gr.Accordion("Code of this step", open=False):
            self.code = gr.Code(language="python", interactive=False, elem_id=f"{prefix}-code")
        with gr.Accordion("Diff from the previous step", open=False):
            self.diff = gr.Code(language=None, interactive=False, elem_id=f"{prefix}-diff")
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
                self.mismatch, self.log, self.code, self.diff, self.prompt, self.reply, self.json]

    def values(self, record: Optional[EpisodeRecord], step: Optional[StepRecord]) -> dict:
        vals = [step_header(step, record), badges_html(step), timing_chart_html(step),
                breakdown_chart_html(step), flags_html(step) if step else "", feedback_text(step),
                mismatch_summary(step), mismatch_frame(step), log_text(step), step.code if step and step.code
                else "", step_diff(record, step), prompt_text(step) if step else "", reply_text(step) if step else "",
                observation_json(step)]
        return dict(zip(self.components, vals))


def step_of(record: Optional[EpisodeRecord], n: Any) -> Optional[StepRecord]:
    if record is None or not record.steps:
        return None
    try:
        n = int(n)
    except (TypeError, ValueError):
        return record.steps[-1]
    return next((s for s in record.steps if s.step == n), record.steps[-1])




class EpisodeView:
    """An episode at a glance (summary, score chart, timeline, step picker) and the step inspector.
    Play shows the live episode in it, Runs a stored one, read-only."""

    def __init__(self, prefix: str, timeline_id: str, plot_id: str, summary_id: str, pick_id: str,
                 progress: bool = False):
        self.summary = gr.Markdown("### No episode yet", elem_id=summary_id)
        self.plot = gr.HTML(scores_chart_html([]), elem_id=plot_id)
        self.timeline = gr.Dataframe(timeline_frame(None), interactive=False, max_height=220,
                                     label="Episode timeline (click a row to inspect that step)", elem_id=timeline_id)
        self.step_pick = gr.Radio([], label="Inspect step", elem_id=pick_id)
        # What a model (or the tour) is doing, next to the step it plays (the status line may be off-screen).
        self.progress = gr.HTML("", elem_id=f"{prefix}-progress") if progress else None
        self.insp = Inspector(prefix)

    @property
    def components(self) -> list:
        return ([self.summary, self.plot, self.timeline, self.step_pick] + ([self.progress] if self.progress else [])
                + self.insp.components)

    def values(self, record: Optional[EpisodeRecord], step: Optional[StepRecord], state: str = "") -> dict:
        if record is None:
            return {self.summary: "### No episode yet", self.plot: scores_chart_html([]),
                    self.timeline: timeline_frame(None), self.step_pick: gr.Radio(choices=[], value=None),
                    **self.insp.values(None, None)}
        out = {self.summary: (f"### {record.task_id} · seed {record.seed} · {player_name(record)}\n"
                              f"Steps {len(record.steps)} of {record.max_turns} · best score "
                              f"**{num(record.score)}**" + (f" · {state}" if state else "")),
               self.plot: scores_chart_html([("episode", record)]), self.timeline: timeline_frame(record),
               self.step_pick: gr.Radio(choices=[s.step for s in record.steps], value=step.step if step else None)}
        out.update(self.insp.values(record, step))
        return out

    def row_step(self, record: Optional[EpisodeRecord], evt: gr.SelectData) -> dict:
        if record is None or not record.steps:
            return {}
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        step = record.steps[min(int(row), len(record.steps) - 1)]
        out = self.insp.values(record, step)
        out[self.step_pick] = gr.Radio(value=step.step)
        return out
