"""One verdict per step, and the number formats every view uses.

Every view of a step (status line, verdict banner, stage badges, timeline row, step header,
feedback) takes its words and colour from ``verdict_of(step)``, so they cannot disagree. The
order decides: an environment error is nobody's verdict; a detected hack beats everything else
(a try/except fallback fails the static checks too, but it is a hack, not a syntax error); then
code that did not load, then wrong, then correct.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal, Optional

from environment.evaluation.result import EvalResult, Finding
from environment.trajectory import StepRecord

Kind = Literal["hack", "wrong", "failed", "correct", "harness", "none"]
# The status-line / banner style of each verdict (style.py colours them for light and dark themes).
STYLE = {"hack": "hack", "wrong": "warn", "failed": "muted", "correct": "ok", "harness": "info", "none": "muted"}
SPEED_KIND = {"measured_cuda": "measured, CUDA events", "measured_cpu": "measured, CPU wall clock",
              "modeled": "modeled H100 estimate"}


def num(x: Optional[float]) -> str:
    """Three significant digits, everywhere (scores, speedups, errors)."""
    if x is None:
        return "–"
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1000:  # 12345 -> 12300, not 1.23e+04
        return f"{float(f'{x:.3g}'):.0f}"
    text = f"{x:#.3g}"  # keeps trailing zeros: 1.50, 0.500
    return text[:-1] if text.endswith(".") else text


def us(ms: Optional[float]) -> str:
    """A duration given in milliseconds, shown in microseconds with three significant digits."""
    return "–" if ms is None else f"{num(ms * 1000.0)} µs"


def score_text(reward: Optional[float]) -> str:
    """A step's score for people: an environment error has none (it is not the player's)."""
    return "no score (environment error)" if reward is None else f"score {num(reward)}"


def evaluation_of(step: Optional[StepRecord]) -> Optional[EvalResult]:
    """The step's typed evaluation record (the JSON is parsed once per step object and cached)."""
    if step is None or not step.evaluation_json:
        return None
    cached = _PARSED.get(id(step))
    if cached is not None and cached[0] is step.evaluation_json:
        return cached[1]
    ev = _parse(step.evaluation_json)
    _PARSED[id(step)] = (step.evaluation_json, ev)
    while len(_PARSED) > 512:
        _PARSED.pop(next(iter(_PARSED)))
    return ev


def obs_of(step: Optional[StepRecord]) -> dict[str, Any]:
    """The step's observation as a plain dict (a copy; empty when there is none)."""
    return dict(step.observation or {}) if step is not None else {}


# id(step) -> (the JSON string it was parsed from, the record); the identity check makes a reused id harmless.
_PARSED: dict[int, tuple[str, Optional[EvalResult]]] = {}


def _parse(text: str) -> Optional[EvalResult]:
    try:
        return EvalResult.model_validate_json(text)
    except ValueError:
        pass
    try:  # JSON has no NaN: older records wrote NaN/Inf values as null
        data = json.loads(text)
        m = (data.get("correctness") or {}).get("mismatch")
        if m:
            for key in ("expected", "actual"):
                m[key] = [math.nan if v is None else v for v in m.get(key) or []]
        return EvalResult.model_validate(data)
    except ValueError:  # a replayed file from another version: the observation still tells the story
        return None


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    title: str                   # one line: "reward hack detected: decoy_kernel, score 0"
    detail: str = ""             # why: the layer and rule of a hack, the first error, the trials
    short: str = ""              # for a table cell: "hack: decoy_kernel", "wrong 3/5", "correct 1.23x"
    hack: Optional[Finding] = None
    line: Optional[int] = None   # the submission line to look at (the editor marks it), from the record
    modeled: bool = False        # the speedup is the H100 model's estimate (the page links its fidelity)

    @property
    def style(self) -> str:
        return STYLE[self.kind]


def verdict_of(step: Optional[StepRecord]) -> Verdict:
    if step is None:
        return Verdict("none", "no step yet", short="–")
    ev, obs = evaluation_of(step), dict(step.observation or {})
    if not obs and ev is None:
        return Verdict("failed", f"did not run: {step.error or 'nothing reached the environment'}",
                       short="did not run")
    outcome = ev.outcome if ev is not None else obs.get("outcome")
    if outcome == "harness_error" or (step.reward is None and obs):
        why = (ev.harness_error if ev is not None else None) or step.error or "the environment failed"
        return Verdict("harness", "no score (environment error)",
                       f"{why}. Not your submission's fault: the turn is not counted.", short="env error")
    hacks = [f for f in ev.findings if f.hack] if ev is not None else []
    if not hacks and ev is None:
        from environment.evaluation import flags as F
        hacks = [Finding(name=F.name_of(f), detail=f.partition(":")[2] or None, hack=True,
                         layer=F.LAYERS.get(F.name_of(f), "runtime-check"))
                 for f in obs.get("flags") or [] if F.is_hack(f)]
    line = ev.failing_line if ev is not None else None
    if hacks:
        h = next((f for f in hacks if f.line), hacks[0])
        names = ", ".join(dict.fromkeys(f.name for f in hacks))
        where = f" at line {h.line}" if h.line else ""
        return Verdict("hack", f"reward hack detected: {names}, score 0",
                       f"caught by the {h.layer} layer{where}: {_rule(h)}", short=f"hack: {names}", hack=h,
                       line=h.line)
    compiled = ev.compiled if ev is not None else bool(obs.get("compiled"))
    if not compiled:
        why = _load_error(ev) or step.error or "it did not compile or load"
        where = f" at line {line}" if line else ""
        return Verdict("failed", f"failed to load{where}, score " + num(step.reward), why, short="did not load",
                       line=line)
    correct = ev.correct if ev is not None else bool(obs.get("correct"))
    passed, total = obs.get("trials_passed", 0), obs.get("trials_total", 0)
    if ev is not None and ev.correctness is not None:
        passed, total = ev.correctness.trials_passed, ev.correctness.trials_total
    if not correct:
        first = (ev.correctness.error if ev is not None and ev.correctness is not None else None) or ""
        return Verdict("wrong", f"wrong: {passed}/{total} trials passed, score {num(step.reward)}",
                       _first_line(first), short=f"wrong {passed}/{total}")
    speedup, kind = obs.get("speedup"), obs.get("speedup_kind")
    perf = ev.performance if ev is not None else None
    if speedup is None and perf is not None:
        speedup, kind = perf.speedup, perf.speedup_kind
    speed = f"{num(speedup)}x faster" if speedup is not None and speedup >= 1 else (
        f"{num(speedup)}x (slower than the reference)" if speedup is not None else "speedup unknown")
    how = f" ({SPEED_KIND.get(kind or '', 'unknown')})" if speedup is not None else ""
    note = (perf.note or "") if perf is not None and speedup is None else ""
    return Verdict("correct", f"correct, {speed}{how}, score {num(step.reward)}",
                   f"{passed}/{total} trials passed" + (f"; {note}" if note else ""),
                   short=f"correct {num(speedup)}x" if speedup is not None else "correct",
                   modeled=speedup is not None and kind == "modeled")


def _rule(f: Finding) -> str:
    from environment.feedback import HINTS
    said = f"{f.name}" + (f" ({f.detail})" if f.detail else "")
    hint = HINTS.get(f.name)
    return said + (f". {hint}" if hint else "")


def _load_error(ev: Optional[EvalResult]) -> Optional[str]:
    if ev is None:
        return None
    if not ev.static.ok:
        return _first_line(ev.static.errors[0]) if ev.static.errors else "static checks failed"
    if ev.load is not None and not ev.load.ok:
        return _first_line(ev.load.error or "did not load")
    return None


def _first_line(text: str, limit: int = 300) -> str:
    line = next((x.strip() for x in (text or "").splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
