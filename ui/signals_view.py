"""The independent signals of a step (evaluation.signals) as a small list next to the verdict:
one chip per signal, its verdict and, on hover, why. A veto or a disagreement is marked so it is
seen first (the monitor counts them too)."""
from __future__ import annotations

from typing import Optional

from environment.trajectory import StepRecord
from ui.markup import esc
from ui.verdict import evaluation_of

ICON = {"agree": "✔", "disagree": "⚠", "veto": "⛔", "abstain": "○"}
CSS = """
.kp-signals { display: flex; flex-wrap: wrap; gap: 6px; margin: 2px 0 4px; font-size: 12px; align-items: center; }
.kp-signal { border-radius: 6px; padding: 1px 8px; border: 1px solid var(--border-color-primary); }
.gradio-container .prose .kp-s-veto { background: #b3261e; color: #fff; }
.gradio-container .prose .kp-s-disagree { background: #fff3d6; color: #6b4800; }
.dark .gradio-container .prose .kp-s-disagree { background: #47340a; color: #ffe4a8; }
.kp-s-abstain { opacity: .7; }
"""


def signals_html(step: Optional[StepRecord]) -> str:
    ev = evaluation_of(step)
    signals = list(ev.signals) if ev is not None else []
    if not signals:
        return ""
    flagged = sum(s.verdict in ("veto", "disagree") for s in signals)
    chips = "".join(
        f'<span class="kp-signal kp-s-{s.verdict}" data-signal="{esc(s.name)}" data-verdict="{s.verdict}" '
        f'title="{esc(s.why)}">{ICON[s.verdict]} {esc(s.name.replace("_", " "))}: {s.verdict}</span>'
        for s in signals)
    head = (f'<b>{flagged} signal(s) disagree</b>' if flagged else "Independent signals:")
    return (f'<div class="kp-signals" data-flagged="{flagged}" role="list" aria-label="independent signals">'
            f'{head}{chips}</div>')


def monitor_signals_html(s: Optional[dict]) -> str:
    """The monitor's signal and label counts (``summary["signals"]``) as one line and a per-minute strip."""
    if not s:
        return ""
    rate = "n/a" if s.get("disagreement_rate") is None else f"{100 * s['disagreement_rate']:.0f}%"
    verdicts = ", ".join(f"{esc(k)} × {v}" for k, v in (s.get("by_verdict") or {}).items()) or "none"
    by_signal = ", ".join(f"<code>{esc(k)}</code> × {v}" for k, v in (s.get("by_signal") or {}).items()) or "none"
    labels = s.get("labels") or {}
    minutes = s.get("per_minute_last_hour") or []
    top = max(minutes or [0]) or 1
    strip = "".join(f'<span title="{len(minutes) - i} min ago: {c}" style="display:inline-block;width:4px;'
                    f'height:{2 + 14 * c // top}px;background:#d08a00;margin-right:1px"></span>'
                    for i, c in enumerate(minutes))
    return (f'<p id="monitor-signals" data-flagged="{s.get("flagged_steps", 0)}" '
            f'data-labels="{sum(labels.values())}">Independent signals: <b>{s.get("flagged_steps", 0)}</b> flagged '
            f'step(s) ({rate}): {verdicts}; by signal: {by_signal}. Labels: '
            + ", ".join(f'<span data-label="{esc(k)}">{esc(k)} × {v}</span>' for k, v in labels.items())
            + f'<br><small>flagged steps per minute, last hour:</small> {strip}</p>')
