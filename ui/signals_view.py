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
