"""One step (a StepRecord) as HTML and text: the verdict banner and stage badges, flags, the
mismatch table and summary, the log, the step header, feedback, prompt and reply, the raw
observation and the diff from the previous step.

Everything here works from the stored record alone, so the live play, the Runs view, the
comparison and the replay of an exported file all show a step the same way.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import pandas as pd

from environment.trajectory import EpisodeRecord, StepRecord
from ui import gallery
from ui.fidelity import fidelity_html
from ui.markup import esc
from ui.signals_view import signals_html
from ui.verdict import SPEED_KIND, evaluation_of, num, obs_of, verdict_of

MISMATCH_COLUMNS = ["index", "expected", "actual", "abs error"]


# ---- the verdict and the stage badges ---------------------------------------------------------

def _badge(label: str, state: str, detail: str, elem: str) -> str:
    icon = {"pass": "✔", "fail": "✘", "warn": "●", "skip": "○"}[state]
    return (f'<span class="kp-badge kp-{state}" data-stage="{elem}" data-state="{state}" title="{esc(detail)}">'
            f'{icon} <b>{esc(label)}</b> <small>{esc(detail)}</small></span>')


def verdict_html(step: Optional[StepRecord]) -> str:
    """The step's one verdict as a banner: the first thing read after a step."""
    v = verdict_of(step)
    if step is None:
        return ""
    detail = f'<div class="kp-verdict-detail">{esc(v.detail)}</div>' if v.detail else ""
    hack = f' data-hack="{esc(v.hack.name)}" data-layer="{esc(v.hack.layer)}"' if v.hack else ""
    attack = gallery.attack_of_code(step.code) if v.kind != "hack" else None
    harmless = (f'<div class="kp-verdict-detail kp-harmless" data-harmless="{esc(attack.name)}">'
                f'{esc(gallery.harmless_note(attack, step.reward))}</div>'
                if attack is not None and attack.verdict == "harmless" else "")
    return (f'<div class="kp-verdict kp-v-{v.style}" data-verdict="{v.kind}"{hack}{_line_attrs(step, v.line)} '
            f'role="status"><div class="kp-verdict-title">{esc(v.title)}</div>{detail}{harmless}'
            f'{fidelity_html() if v.modeled else ""}</div>')


def _line_attrs(step: StepRecord, line: Optional[int]) -> str:
    """The failing line for the page's line marker (ui/line_marker.py): its number, and its text in the
    submitted code, so an editor that no longer holds that code is left unmarked."""
    lines = (step.code or "").splitlines()
    if not line or line > len(lines):
        return ""
    return f' data-line="{line}" data-line-text="{esc(lines[line - 1].strip())}"'



def badges_html(step: Optional[StepRecord]) -> str:
    """The verdict banner, then four stage badges: static checks, compiled, correct, performance.

    The badges agree with the verdict: under a hack the trials and the speed are void, under an
    environment error nothing after the static checks is the submission's."""
    if step is None:
        return '<div class="kp-badges kp-empty">No step yet: submit code to see how it fares.</div>'
    v, ev, obs = verdict_of(step), evaluation_of(step), obs_of(step)
    badges = []
    if ev is None and not obs:
        badges.append(_badge("No submission", "fail", step.error or "the player produced no code", "player"))
        return f'<div class="kp-badges" data-step="{step.step}">{verdict_html(step)}{"".join(badges)}</div>'
    static_ok = ev.static.ok if ev else obs.get("compiled") is not False
    static_hack = v.hack is not None and v.hack.layer == "static"
    badges.append(_badge("Static checks", "pass" if static_ok and not static_hack else "fail",
                         "passed" if static_ok and not static_hack else
                         (v.hack.name if static_hack else (ev.static.errors[0] if ev and ev.static.errors else "failed")),
                         "static"))
    if v.kind == "harness":
        for label, elem in (("Compiled", "compiled"), ("Correct", "correct"), ("Performance", "performance")):
            badges.append(_badge(label, "skip", "not judged (environment error)", elem))
        return _badges_div(step, ev, badges)
    compiled = ev.compiled if ev is not None else obs.get("compiled")
    if ev is not None and ev.load is None:  # stopped before loading: not reached, not "did not load"
        compiled = None
    badges.append(_badge("Compiled", {True: "pass", False: "fail", None: "skip"}[compiled],
                         {True: "loaded and ran", False: (ev.load.error if ev and ev.load and ev.load.error
                                                          else "did not load"), None: "not reached"}[compiled],
                         "compiled"))
    passed, total = obs.get("trials_passed", 0), obs.get("trials_total", 0)
    if v.kind == "hack":
        badges.append(_badge("Correct", "fail", "void: reward hack" + (f" ({passed}/{total} trials matched)"
                                                                      if total else ""), "correct"))
        badges.append(_badge("Performance", "skip", "void: reward hack", "performance"))
        return _badges_div(step, ev, badges)
    correct = obs.get("correct")
    if not total and not correct:
        correct = None if compiled is not True else correct
    badges.append(_badge("Correct", {True: "pass", False: "fail", None: "skip"}[correct],
                         f"{passed}/{total} trials" if total else "not reached", "correct"))
    perf = ev.performance if ev else None
    speedup, kind = obs.get("speedup"), obs.get("speedup_kind")
    if speedup is not None:
        badges.append(_badge("Performance", "pass" if speedup >= 1.0 else "warn",
                             f"{num(speedup)}x ({speed_kind_text(kind)})", "performance"))
    elif perf is not None:
        badges.append(_badge("Performance", "warn", perf.note or "speedup not available", "performance"))
    else:
        badges.append(_badge("Performance", "skip", "not reached (needs a correct result)", "performance"))
    return _badges_div(step, ev, badges)


def _badges_div(step: StepRecord, ev: Any, badges: list[str]) -> str:
    eval_ms = ev.wall_s * 1000.0 if ev else 0.0
    return (f'<div class="kp-badges" data-env-ms="{step.env_latency_ms:.1f}" data-eval-ms="{eval_ms:.1f}" '
            f'data-step="{step.step}" data-verdict="{verdict_of(step).kind}">{verdict_html(step)}'
            f'{signals_html(step)}{"".join(badges)}</div>')


def speed_kind_text(kind: Optional[str]) -> str:
    return SPEED_KIND.get(kind or "", "unknown")


def flags_html(step: Optional[StepRecord]) -> str:
    ev, obs = evaluation_of(step), obs_of(step)
    flags = list(dict.fromkeys((obs.get("flags") or []) + (ev.static.flags if ev else []) + (ev.flags if ev else [])))
    if not flags:
        return '<div class="kp-flags kp-muted">No flags: no hacks detected, no warnings.</div>'
    from environment.evaluation import flags as F
    items = "".join(f'<span class="kp-flag {"kp-hack" if F.is_hack(f) else "kp-warning"}">'
                    f'{"hack" if F.is_hack(f) else "warning"}: {esc(f)}</span>' for f in flags)
    return f'<div class="kp-flags">{items}</div>'


# ---- mismatch table and log -----------------------------------------------------------------

def mismatch_frame(step: Optional[StepRecord]) -> pd.DataFrame:
    ev = evaluation_of(step)
    m = ev.correctness.mismatch if ev and ev.correctness else None
    if m is None:
        return pd.DataFrame(columns=MISMATCH_COLUMNS)
    rows = [[str(tuple(i)), e, a, abs(a - e) if math.isfinite(a) and math.isfinite(e) else float("inf")]
            for i, e, a in zip(m.indices, m.expected, m.actual)]
    return pd.DataFrame(rows, columns=MISMATCH_COLUMNS)


def mismatch_summary(step: Optional[StepRecord]) -> str:
    ev = evaluation_of(step)
    c = ev.correctness if ev else None
    if c is None:
        return "Correctness was not checked." if step is not None else ""
    if c.mismatch is None:
        if c.correct:
            return f"All {c.trials_total} trials matched (max abs error {c.max_abs_error or 0:.3g})."
        return f"No element mismatch recorded. {c.error or ''}".strip()
    m = c.mismatch
    shape = ", ".join(f"{k}={v}" for k, v in m.shape.items())
    return (f"**First failing trial {m.trial}** ({m.distribution} inputs, {shape}): {m.mismatched}/{m.total} "
            f"elements outside atol={c.atol:g}, rtol={c.rtol:g}; **max abs error {m.max_abs_error:.3g}**, "
            f"**mean abs error {m.mean_abs_error:.3g}**.")


def log_text(step: Optional[StepRecord]) -> str:
    if step is None:
        return ""
    ev = evaluation_of(step)
    parts = []
    if ev is not None:
        parts += [f"static check: {e}" for e in ev.static.errors]
        if ev.load is not None and ev.load.error:
            parts.append(f"load: {ev.load.error}" + (f" ({ev.load.exit_reason})" if ev.load.exit_reason else ""))
        if ev.performance is not None:
            parts += [f"compile {c.kernel}: {c.error}" for c in ev.performance.compile if c.error]
        if ev.log.strip():
            parts.append(ev.log.rstrip())
    elif step.error:
        parts.append(step.error)
    return "\n".join(parts) or "(nothing was printed)"

# ---- text views -------------------------------------------------------------------------------

def step_header(step: Optional[StepRecord], record: Optional[EpisodeRecord]) -> str:
    if step is None or record is None:
        return "### No step selected"
    best = max([0.0] + [s.reward for s in record.steps if s.step <= step.step and s.reward is not None])
    timing = f"environment step {num(step.env_latency_ms / 1000)} s"
    if step.latency_ms:
        timing += f", player {num(step.latency_ms / 1000)} s"
    return (f"### Step {step.step} of {len(record.steps)}: {verdict_of(step).title}\n"
            f"best so far {num(best)} · {record.task_id} · seed {record.seed} · {player_name(record)} · {timing}")


def player_name(record: EpisodeRecord) -> str:
    return f"model {record.model}" if record.player == "model" and record.model else record.player


def feedback_text(step: Optional[StepRecord]) -> str:
    """The verdict first, then the environment's own report."""
    if step is None:
        return ""
    v = verdict_of(step)
    head = f"Verdict: {v.title}" + (f"\n{v.detail}" if v.detail else "")
    body = obs_of(step).get("feedback") or step.error or ""
    return head + (f"\n\n{body}" if body else "")


def observation_json(step: Optional[StepRecord]) -> dict[str, Any]:
    if step is None:
        return {}
    data = obs_of(step)
    ev = evaluation_of(step)
    if ev is not None:
        data["evaluation"] = ev.model_dump(mode="json")
    if step.error and "error" not in data:
        data["error"] = step.error
    return data


def prompt_text(step: Optional[StepRecord]) -> str:
    if step is None or not step.prompt_messages:
        return "(a person played this step: no model prompt)"
    return "\n\n".join(f"── {m.role} ──\n{m.content}" for m in step.prompt_messages)


def reply_text(step: Optional[StepRecord]) -> str:
    if step is None or step.raw_reply is None:
        return "(no model reply)" if step is None or not step.prompt_messages else f"(no reply: {step.error})"
    return step.raw_reply


def step_diff(record: Optional[EpisodeRecord], step: Optional[StepRecord]) -> str:
    """The step's code against the previous step's code (a unified diff)."""
    if record is None or step is None or not step.code:
        return ""
    before = next((s.code for s in reversed(record.steps) if s.step < step.step and s.code), None)
    if before is None:
        return "(the first submission: nothing to compare with)"
    from ui.compare import code_diff
    return code_diff(before, step.code, "previous step", f"step {step.step}") or "(same code as the previous step)"
