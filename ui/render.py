"""Pure renderers: one step (a StepRecord) or one episode (an EpisodeRecord) to HTML, frames and text.

Everything here works from the stored record alone, so the live play, the timeline, the
comparison and the replay of an exported file all render a step the same way.
"""
from __future__ import annotations

import html
import json
import math
from typing import Any, Optional, Sequence

import pandas as pd

from environment.evaluation.result import TimingStats
from environment.reward import W_COMPILED, W_CORRECT, W_SPEED, W_TRIALS
from environment.trajectory import EpisodeRecord, StepRecord
from ui.costs import cost_breakdown_html
from ui.roofline import why_html
from ui.verdict import SPEED_KIND, evaluation_of, num, score_text, us, verdict_of

__all__ = ["score_text", "evaluation_of", "verdict_of", "num"]  # re-exported for the tabs

PARTS = (("compiled", W_COMPILED, "#6c8ebf"), ("trials", W_TRIALS, "#9673a6"),
         ("correct", W_CORRECT, "#82b366"), ("speed", W_SPEED, "#d79b00"))
MISMATCH_COLUMNS = ["index", "expected", "actual", "abs error"]
TIMELINE_COLUMNS = ["step", "score", "best so far", "verdict", "speedup"]



def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def obs_of(step: Optional[StepRecord]) -> dict[str, Any]:
    return dict(step.observation or {}) if step is not None else {}


# ---- stage badges ----------------------------------------------------------------------------

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
    return (f'<div class="kp-verdict kp-v-{v.style}" data-verdict="{v.kind}"{hack} role="status">'
            f'<div class="kp-verdict-title">{esc(v.title)}</div>{detail}</div>')


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
            f'{"".join(badges)}</div>')


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


# ---- charts (inline SVG: bars with dispersion whiskers, a stacked breakdown) ------------------

def _timing_stats(step: Optional[StepRecord]) -> tuple[Optional[TimingStats], Optional[TimingStats], str, str]:
    ev, obs = evaluation_of(step), obs_of(step)
    perf = ev.performance if ev else None
    kind = obs.get("speedup_kind") or (perf.speedup_kind if perf else None)
    note = (perf.note if perf and perf.note else "") or ""
    if perf is not None and (perf.reference or perf.candidate):
        return perf.reference, perf.candidate, kind or "", note
    timings = obs.get("timings") or {}
    ref, cand = timings.get("reference"), timings.get("candidate")
    return (TimingStats(**ref) if ref else None, TimingStats(**cand) if cand else None, kind or "", note)


def timing_chart_html(step: Optional[StepRecord]) -> str:
    """Reference vs candidate median time in µs. Measured times get whiskers (min to max) and a band
    of one std; modeled times are deterministic, so they get neither."""
    if step is None:
        return '<div class="kp-chart kp-muted">Timings appear after a submission.</div>'
    ref, cand, kind, note = _timing_stats(step)
    if ref is None and cand is None:
        reason = note or ("the submission was not correct, so it was not timed" if obs_of(step).get("correct") is not True
                          else "no timing was recorded")
        return (f'<div class="kp-chart" data-kind="none"><div class="kp-chart-title">Timings: not available</div>'
                f'<div class="kp-muted">{esc(reason)}</div></div>')
    spread = kind != "modeled"
    rows = [("reference", ref, "#8c8c8c"), ("candidate", cand, "#2f7ed8")]
    top = max(((s.max_ms if spread else s.median_ms) for _, s, _ in rows if s), default=1.0) or 1.0
    width, left, bar_h, gap = CHART_W, 90, 22, 18
    scale = (width - left - 110) / top
    parts = []
    for i, (name, s, color) in enumerate(rows):
        y = 10 + i * (bar_h + gap)
        parts.append(f'<text x="{left - 8}" y="{y + bar_h * 0.7}" text-anchor="end" class="kp-svg-label">{name}</text>')
        if s is None:
            parts.append(f'<text x="{left}" y="{y + bar_h * 0.7}" class="kp-svg-muted">not timed</text>')
            continue
        med = s.median_ms * scale
        tip = (f"{name}: {us(s.median_ms)} (modeled)" if not spread else
               f"{name}: median {us(s.median_ms)}, min {us(s.min_ms)}, max {us(s.max_ms)}, std {us(s.std_ms)}, "
               f"{s.samples} samples")
        parts.append(f'<rect x="{left}" y="{y}" width="{med:.1f}" height="{bar_h}" fill="{color}" rx="3">'
                     f'<title>{tip}</title></rect>')
        end = left + med
        if spread:
            lo, hi = left + max(0.0, s.median_ms - s.std_ms) * scale, left + (s.median_ms + s.std_ms) * scale
            parts.append(f'<rect x="{lo:.1f}" y="{y + bar_h / 2 - 4}" width="{max(hi - lo, 0.5):.1f}" height="8" '
                         f'class="kp-svg-band"/>')
            x0, x1, ym = left + s.min_ms * scale, left + s.max_ms * scale, y + bar_h / 2
            parts.append(f'<g class="kp-whisker"><line x1="{x0:.1f}" x2="{x1:.1f}" y1="{ym}" y2="{ym}"/>'
                         f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{ym - 6}" y2="{ym + 6}"/>'
                         f'<line x1="{x1:.1f}" x2="{x1:.1f}" y1="{ym - 6}" y2="{ym + 6}"/></g>')
            end = x1
        parts.append(f'<text x="{end + 6:.1f}" y="{y + bar_h * 0.7}" class="kp-svg-label">{us(s.median_ms)}</text>')
    axis_y = 10 + 2 * (bar_h + gap)
    parts.append(f'<text x="{left + (width - left - 110) / 2:.0f}" y="{axis_y + 4}" text-anchor="middle" '
                 f'class="kp-svg-muted">time per forward call (µs, shorter is faster)</text>')
    height = axis_y + 10
    ev = evaluation_of(step)
    perf = ev.performance if ev else None
    speedup = obs_of(step).get("speedup")
    how = "modeled (H100 roofline estimate, not measured)" if kind == "modeled" else (
        "measured" + (" with CUDA events" if kind == "measured_cuda" else " on CPU wall clock" if kind else ""))
    title = f"Timings, {how}" + (f": speedup {num(speedup)}x" if speedup is not None else "")
    legend = ("bar: median; whiskers: min to max; band: ±1 std" if spread else
              "bar: modeled time (deterministic: no spread to show)")
    return (f'<div class="kp-chart" data-kind="{esc(kind or "unknown")}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{_svg(width, height, title, parts)}<div class="kp-muted">{legend}</div>'
            f'{why_html(perf)}{cost_breakdown_html(perf)}</div>')


CHART_W = 640  # every chart is drawn at this pixel width (shrunk, never stretched): fonts stay 12 px


def _svg(width: int, height: float, label: str, parts: list[str]) -> str:
    return (f'<svg class="kp-svg" viewBox="0 0 {width} {height:.0f}" width="{width}" height="{height:.0f}" '
            f'role="img" aria-label="{esc(label)}">{"".join(parts)}</svg>')


def breakdown_chart_html(step: Optional[StepRecord]) -> str:
    """The score as stacked parts on a 0..1 axis; each part's maximum shown as a pale slot."""
    if step is None:
        return '<div class="kp-chart kp-muted">The reward breakdown appears after a submission.</div>'
    parts = obs_of(step).get("reward_breakdown") or {}
    total = sum(float(v or 0.0) for v in parts.values())
    width, left, bar_h = CHART_W, 10, 26
    span = width - 2 * left
    x = left
    shapes, legend = [], []
    for name, weight, color in PARTS:
        value = float(parts.get(name) or 0.0)
        w_slot, w_val = weight * span, value * span
        shapes.append(f'<rect x="{x:.1f}" y="10" width="{w_slot:.1f}" height="{bar_h}" fill="{color}" opacity="0.18"/>')
        shapes.append(f'<rect x="{x:.1f}" y="10" width="{w_val:.1f}" height="{bar_h}" fill="{color}">'
                      f'<title>{name}: {num(value)} of {weight:.2f}</title></rect>')
        x += w_slot
        legend.append(f'<span class="kp-legend" data-part="{name}"><i style="background:{color}"></i>'
                      f'{name} {num(value)}/{weight:.2f}</span>')
    title = f"Score {num(total)} = " + " + ".join(num(float(parts.get(n) or 0.0)) for n, _, _ in PARTS)
    return (f'<div class="kp-chart" data-score="{total:.4f}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{_svg(width, bar_h + 20, title, shapes)}<div>{"".join(legend)}</div></div>')


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


# ---- episode views ---------------------------------------------------------------------------

def timeline_frame(record: Optional[EpisodeRecord]) -> pd.DataFrame:
    if record is None or not record.steps:
        return pd.DataFrame(columns=TIMELINE_COLUMNS)
    rows, best = [], 0.0
    for s in record.steps:
        best = max(best, s.reward if s.reward is not None else 0.0)
        speedup = obs_of(s).get("speedup")
        rows.append([s.step, num(s.reward), num(best), verdict_of(s).short,
                     f"{num(speedup)}x" if speedup is not None else "–"])
    return pd.DataFrame(rows, columns=TIMELINE_COLUMNS)


def scores_frame(records: Sequence[tuple[str, Optional[EpisodeRecord]]]) -> pd.DataFrame:
    """Long frame (step, score, series) for a LinePlot: per-step score and best so far of each record."""
    rows = []
    for name, record in records:
        if record is None:
            continue
        best = 0.0
        for s in record.steps:
            best = max(best, s.reward if s.reward is not None else 0.0)
            if len(records) == 1:
                rows += [(s.step, s.reward, "score"), (s.step, best, "best so far")]
            else:
                rows.append((s.step, s.reward, name))
    frame = pd.DataFrame(rows, columns=["step", "score", "series"])
    # Typed even when empty: the plot picks quantitative axes from the dtypes.
    return frame.astype({"step": "int64", "score": "float64", "series": "object"})


SERIES_COLORS = ("#2f7ed8", "#d79b00", "#82b366", "#9673a6")


def scores_chart_html(records: Sequence[tuple[str, Optional[EpisodeRecord]]], title: str = "Score per step") -> str:
    """A line per series of scores_frame (score and best so far of one episode, or one line per player)."""
    frame = scores_frame(records)
    if frame.empty:
        return f'<div class="kp-chart kp-muted" data-points="0">{esc(title)}: no steps yet.</div>'
    width, height, left, right, top, bottom = CHART_W, 206, 52, 16, 10, 44
    last = max(2, int(frame["step"].max()))
    def px(step: float) -> float:
        return left + (step - 1) / (last - 1) * (width - left - right)
    def py(score: float) -> float:
        return top + (1.0 - score) * (height - top - bottom)
    parts = []
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{py(v):.1f}" y2="{py(v):.1f}" class="kp-svg-grid"/>'
                     f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end" class="kp-svg-muted">{v:g}</text>')
    for n in range(1, last + 1):
        parts.append(f'<text x="{px(n):.1f}" y="{height - 26}" text-anchor="middle" class="kp-svg-muted">{n}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle" '
                 f'class="kp-svg-muted">step</text>'
                 f'<text x="12" y="{(top + height - bottom) / 2:.0f}" text-anchor="middle" class="kp-svg-muted" '
                 f'transform="rotate(-90 12 {(top + height - bottom) / 2:.0f})">score</text>')
    legend = []
    for i, (name, group) in enumerate(frame.groupby("series", sort=False)):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        dash = ' stroke-dasharray="5 4"' if name == "best so far" else ""
        points = " ".join(f"{px(r.step):.1f},{py(r.score):.1f}" for r in group.itertuples())
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2.5"{dash}/>')
        parts += [f'<circle cx="{px(r.step):.1f}" cy="{py(r.score):.1f}" r="4" fill="{color}">'
                  f'<title>{esc(name)}, step {r.step}: {num(r.score)}</title></circle>' for r in group.itertuples()]
        legend.append(f'<span class="kp-legend" data-series="{esc(name)}"><i style="background:{color}"></i>'
                      f'{esc(name)}</span>')
    return (f'<div class="kp-chart" data-points="{len(frame)}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{_svg(width, height, title, parts)}<div>{"".join(legend)}</div></div>')


def best_step(record: Optional[EpisodeRecord]) -> Optional[StepRecord]:
    if record is None:
        return None
    stepped = [s for s in record.steps if s.code is not None]
    return max(stepped, key=lambda s: s.reward, default=None)


def winner_html(a: tuple[str, Optional[EpisodeRecord]], b: tuple[str, Optional[EpisodeRecord]]) -> str:
    """Best score wins; a tie goes to the one that reached it in fewer steps."""
    (na, ra), (nb, rb) = a, b
    if ra is None or rb is None or not ra.steps or not rb.steps:
        return '<div class="kp-winner kp-muted">No result yet.</div>'

    def key(r: EpisodeRecord) -> tuple[float, int]:
        best = r.score
        first = next((s.step for s in r.steps if s.reward == best), len(r.steps))
        return best, -first

    ka, kb = key(ra), key(rb)
    if ka == kb:
        text = f"Tie: both reached {num(ra.score)} in {-ka[1]} step(s)."
        winner = "tie"
    else:
        winner, loser = (na, nb) if ka > kb else (nb, na)
        text = (f"Winner {winner}, best score {num(max(ka, kb)[0])} (step {-max(ka, kb)[1]}) against "
                f"{num(min(ka, kb)[0])} (step {-min(ka, kb)[1]}) for {loser}.")
    return f'<div class="kp-winner" data-winner="{esc(winner)}">{esc(text)}</div>'


def ranking_html(ranked: Sequence[tuple[str, EpisodeRecord]]) -> str:
    """Players ranked by best score, then by fewer steps to reach it; the first is the winner."""
    from ui.compare import steps_to_best
    if not ranked:
        return '<div class="kp-winner kp-muted">No result yet.</div>'
    top = ranked[0]
    tie = len(ranked) > 1 and (ranked[1][1].score, steps_to_best(ranked[1][1])) == (top[1].score,
                                                                                   steps_to_best(top[1]))
    lines = "".join(f"<li>{esc(n)}: best {num(r.score)} at step {steps_to_best(r)}</li>" for n, r in ranked)
    head = "Tie at the top" if tie else f"Winner {top[0]}"
    return (f'<div class="kp-winner" data-winner="{"tie" if tie else esc(top[0])}">{esc(head)}'
            f'<ol class="kp-ranking">{lines}</ol></div>')


def step_diff(record: Optional[EpisodeRecord], step: Optional[StepRecord]) -> str:
    """The step's code against the previous step's code (a unified diff)."""
    if record is None or step is None or not step.code:
        return ""
    before = next((s.code for s in reversed(record.steps) if s.step < step.step and s.code), None)
    if before is None:
        return "(the first submission: nothing to compare with)"
    from ui.compare import code_diff
    return code_diff(before, step.code, "previous step", f"step {step.step}") or "(same code as the previous step)"


def status_html(message: str, kind: str = "info") -> str:
    """A one-line notice in the page: info, ok, busy or error."""
    return f'<div class="kp-status kp-status-{kind}" data-kind="{kind}">{esc(message)}</div>'


def dumps(value: Any) -> str:
    return json.dumps(value, indent=1, default=str)
