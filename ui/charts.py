"""Charts as inline SVG drawn at two fixed sizes, desktop and phone (12 px text, axis titles): a step's timings and score
breakdown, and the score per step of one episode or of several players.

Measured times get whiskers (min to max) and a band of one std; modeled times are deterministic
and get neither. Everything is drawn from the stored records alone.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import pandas as pd

from environment.evaluation.result import TimingStats
from environment.reward import W_COMPILED, W_CORRECT, W_SPEED, W_TRIALS
from environment.trajectory import EpisodeRecord, StepRecord
from ui.costs import cost_breakdown_html
from ui.markup import esc
from ui.roofline import why_html
from ui.verdict import evaluation_of, num, obs_of, us
from ui.widths import CHART_W, NARROW_W

PARTS = (("compiled", W_COMPILED, "#6c8ebf"), ("trials", W_TRIALS, "#9673a6"),
         ("correct", W_CORRECT, "#82b366"), ("speed", W_SPEED, "#d79b00"))


def _svg(width: int, height: float, label: str, parts: list[str]) -> str:
    return (f'<svg class="kp-svg {"kp-svg-narrow" if width == NARROW_W else "kp-svg-wide"}" '
            f'viewBox="0 0 {width} {height:.0f}" width="{width}" height="{height:.0f}" '
            f'role="img" aria-label="{esc(label)}">{"".join(parts)}</svg>')


def both_widths(draw: Callable[[int], str]) -> str:
    """A chart drawn at the desktop width and at a phone's: CSS (a container query) shows the one that
    fits, so the text is never scaled below ~11 px."""
    return draw(CHART_W) + draw(NARROW_W)


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

    def draw(width: int) -> str:
        left, bar_h, gap = 90, 22, 18
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
        mid = left + (width - left - 110) / 2 if width == CHART_W else width / 2  # the narrow one: no clipping
        parts.append(f'<text x="{mid:.0f}" y="{axis_y + 4}" text-anchor="middle" '
                     f'class="kp-svg-muted">time per forward call (µs, shorter is faster)</text>')
        height = axis_y + 10
        return _svg(width, height, title, parts)
    ev = evaluation_of(step)
    perf = ev.performance if ev else None
    speedup = obs_of(step).get("speedup")
    how = "modeled (H100 roofline estimate, not measured)" if kind == "modeled" else (
        "measured" + (" with CUDA events" if kind == "measured_cuda" else " on CPU wall clock" if kind else ""))
    title = f"Timings, {how}" + (f": speedup {num(speedup)}x" if speedup is not None else "")
    legend = ("bar: median; whiskers: min to max; band: ±1 std" if spread else
              "bar: modeled time (deterministic: no spread to show)")
    return (f'<div class="kp-chart" data-kind="{esc(kind or "unknown")}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{both_widths(draw)}<div class="kp-muted">{legend}</div>'
            f'{why_html(perf)}{cost_breakdown_html(perf)}</div>')


def breakdown_chart_html(step: Optional[StepRecord]) -> str:
    """The score as stacked parts on a 0..1 axis; each part's maximum shown as a pale slot."""
    if step is None:
        return '<div class="kp-chart kp-muted">The reward breakdown appears after a submission.</div>'
    parts = obs_of(step).get("reward_breakdown") or {}
    total = sum(float(v or 0.0) for v in parts.values())
    left, bar_h = 10, 26
    legend = []

    def draw(width: int) -> str:
        span, x, shapes = width - 2 * left, left, []
        for name, weight, color in PARTS:
            value = float(parts.get(name) or 0.0)
            w_slot, w_val = weight * span, value * span
            shapes.append(f'<rect x="{x:.1f}" y="10" width="{w_slot:.1f}" height="{bar_h}" fill="{color}" '
                          'opacity="0.18"/>')
            shapes.append(f'<rect x="{x:.1f}" y="10" width="{w_val:.1f}" height="{bar_h}" fill="{color}">'
                          f'<title>{name}: {num(value)} of {weight:.2f}</title></rect>')
            x += w_slot
        return _svg(width, bar_h + 20, title, shapes)
    for name, weight, color in PARTS:
        value = float(parts.get(name) or 0.0)
        legend.append(f'<span class="kp-legend" data-part="{name}"><i style="background:{color}"></i>'
                      f'{name} {num(value)}/{weight:.2f}</span>')
    title = f"Score {num(total)} = " + " + ".join(num(float(parts.get(n) or 0.0)) for n, _, _ in PARTS)
    return (f'<div class="kp-chart" data-score="{total:.4f}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{both_widths(draw)}<div>{"".join(legend)}</div></div>')


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
    height, left, right, top, bottom = 206, 52, 16, 10, 44
    last = max(2, int(frame["step"].max()))
    groups = list(frame.groupby("series", sort=False))
    legend = [f'<span class="kp-legend" data-series="{esc(name)}"><i style="background:'
              f'{SERIES_COLORS[i % len(SERIES_COLORS)]}"></i>{esc(name)}</span>' for i, (name, _) in enumerate(groups)]

    def draw(width: int) -> str:
        def px(step: float) -> float:
            return left + (step - 1) / (last - 1) * (width - left - right)

        def py(score: float) -> float:
            return top + (1.0 - score) * (height - top - bottom)
        parts = []
        for v in (0.0, 0.25, 0.5, 0.75, 1.0):
            parts.append(f'<line x1="{left}" x2="{width - right}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
                         f'class="kp-svg-grid"/><text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end" '
                         f'class="kp-svg-muted">{v:g}</text>')
        every = max(1, -(-last * 28 // (width - left - right)))  # step labels at least 28 px apart
        for n in range(1, last + 1, every):
            parts.append(f'<text x="{px(n):.1f}" y="{height - 26}" text-anchor="middle" class="kp-svg-muted">{n}</text>')
        parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle" '
                     f'class="kp-svg-muted">step</text>'
                     f'<text x="12" y="{(top + height - bottom) / 2:.0f}" text-anchor="middle" class="kp-svg-muted" '
                     f'transform="rotate(-90 12 {(top + height - bottom) / 2:.0f})">score</text>')
        for i, (name, group) in enumerate(groups):
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            dash = ' stroke-dasharray="5 4"' if name == "best so far" else ""
            points = " ".join(f"{px(r.step):.1f},{py(r.score):.1f}" for r in group.itertuples())
            parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2.5"{dash}/>')
            parts += [f'<circle cx="{px(r.step):.1f}" cy="{py(r.score):.1f}" r="4" fill="{color}">'
                      f'<title>{esc(name)}, step {r.step}: {num(r.score)}</title></circle>' for r in group.itertuples()]
        return _svg(width, height, title, parts)
    return (f'<div class="kp-chart" data-points="{len(frame)}"><div class="kp-chart-title">{esc(title)}</div>'
            f'{both_widths(draw)}<div>{"".join(legend)}</div></div>')


