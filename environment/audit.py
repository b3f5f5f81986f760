"""Audit: the independent signals' disagreements and people's labels, counted for the monitor, and a
review sample that puts flagged steps first (sample outputs and look at them).

A label is one of LABELS with a note, given to one step of one episode (the playground stores it with
the episode; the monitor counts it). ``Tally`` is what the monitor keeps: counts by signal and
verdict, per-minute counts over the last hour, and label counts.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

LABELS = ("clean", "reward_hack", "wrong_verdict", "harness_bug")
LabelKind = Literal["clean", "reward_hack", "wrong_verdict", "harness_bug"]
MAX_NOTE = 2000
WINDOW_S = 3600.0


class Label(BaseModel):
    """A person's verdict on one step."""
    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1, description="The step (1-based) the label is about.")
    label: LabelKind = Field(description="clean, reward_hack, wrong_verdict or harness_bug.")
    note: str = Field("", max_length=MAX_NOTE, description="Why, in the labeller's words.")
    at: str = Field("", description="When it was given (ISO 8601, UTC).")


def check_label(label: str, note: str) -> None:
    """Raise ValueError naming the fix when a label cannot be stored."""
    if label not in LABELS:
        raise ValueError(f"unknown label {label!r}; choose one of {', '.join(LABELS)}")
    if len(note or "") > MAX_NOTE:
        raise ValueError(f"the note is {len(note)} characters; keep it under {MAX_NOTE}")


def flagged(observation: Any) -> list[Any]:
    """The vetoes and disagreements among a step's signals (observation or EvalResult or dict)."""
    ev = getattr(observation, "evaluation", observation)
    if isinstance(ev, dict):
        signals = ev.get("signals") or []
        return [s for s in signals if s.get("verdict") in ("veto", "disagree")]
    return [s for s in getattr(ev, "signals", None) or [] if s.verdict in ("veto", "disagree")]


class Tally:
    """Disagreement and label counts; the monitor holds one under its lock."""

    def __init__(self) -> None:
        self.by_signal: Counter = Counter()     # "name:verdict" -> count
        self.verdicts: Counter = Counter()      # "disagree"/"veto" -> count
        self.flagged_steps = 0
        self.labels: Counter = Counter()
        self.times: list[tuple[float, str]] = []  # (when, verdict) of each flagged step, last hour

    def on_step(self, observation: Any, now: float) -> None:
        found = flagged(observation)
        for s in found:
            self.by_signal[f"{s.name}:{s.verdict}"] += 1
        if found:
            worst = "veto" if any(s.verdict == "veto" for s in found) else "disagree"
            self.verdicts[worst] += 1
            self.flagged_steps += 1
            self.times.append((now, worst))
        while self.times and self.times[0][0] < now - WINDOW_S:
            self.times.pop(0)

    def on_label(self, label: str) -> None:
        self.labels[label] += 1

    def clear(self) -> None:
        self.__init__()

    def summary(self, now: float, steps: int) -> dict[str, Any]:
        minutes = Counter(int((now - t) // 60) for t, _ in self.times)
        return {"flagged_steps": self.flagged_steps, "steps": steps,
                "disagreement_rate": round(self.flagged_steps / steps, 4) if steps else None,
                "by_verdict": dict(self.verdicts), "by_signal": dict(self.by_signal.most_common()),
                "per_minute_last_hour": [minutes.get(m, 0) for m in range(59, -1, -1)],
                "labels": {k: self.labels.get(k, 0) for k in LABELS}}


def review_sample(steps: list[tuple[str, int, Any, Optional[str]]], limit: int, seed: Optional[int] = None
                  ) -> list[dict[str, Any]]:
    """Steps to look at: (episode_id, step, observation dict, label) -> flagged unlabelled steps first (newest
    first), then a seeded random sample of the other unlabelled ones."""
    rows = [(eid, n, obs, lab) for eid, n, obs, lab in steps if lab is None]
    hot = [r for r in reversed(rows) if flagged((r[2] or {}).get("evaluation") or {})]
    cold = [r for r in rows if r not in hot]
    random.Random(seed).shuffle(cold)
    out = []
    for eid, n, obs, _ in (hot + cold)[:max(0, limit)]:
        obs = obs or {}
        out.append({"episode_id": eid, "step": n, "task_id": obs.get("task_id"), "reward": obs.get("reward"),
                    "flagged": [f"{s.get('name')}:{s.get('verdict')}" for s in
                                flagged((obs.get("evaluation") or {}))]})
    return out
