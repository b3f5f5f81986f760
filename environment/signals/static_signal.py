"""The static detector set (static_rules.py) as one signal: disagree when a rule fires on code the
main verdict did not flag as a hack, agree otherwise (value: how many rules fired)."""
from __future__ import annotations

from environment.evaluation.result import EvalResult, Signal
from environment.signals.static_rules import RULES, scan

NAME = "static_rules"


def signal(task, code: str, result: EvalResult) -> Signal:
    hits = scan(code, task.reference_code)
    if not hits:
        return Signal(name=NAME, verdict="agree", value=0.0, why=f"none of {len(RULES)} rules fired")
    parts = [f"{name} (line {found[0][0]}: {found[0][1]})" for name, found in hits.items()]
    if result.hacked:
        return Signal(name=NAME, verdict="agree", value=float(len(hits)),
                      why="the main verdict flagged a hack too: " + "; ".join(parts))
    return Signal(name=NAME, verdict="disagree", value=float(len(hits)),
                  why="no hack flagged, but the rules call it " + "; ".join(parts))
