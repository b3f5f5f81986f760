"""What the environment serves, while a training run (or anyone) plays it: a ring buffer of recent
episodes from every session, and the summaries ``GET /monitor`` and the playground's Monitor view show.

Off unless ``KERNEL_ENV_MONITOR=1``: the buffer holds other sessions' code. ``KERNEL_ENV_MONITOR_TOKEN``
additionally requires that token (HTTP header, never a query string, so never in access logs).

Each episode is kept as the same ``EpisodeRecord`` the playground and inference.py export, so any
of them opens in the step inspector or the Replay tab. An episode's reward is the training rule
(``environment.training.episode_reward``): the best step, 0 without a submission, none (not
counted in the histograms) when the environment failed during it.

>>> MONITOR.on_reset(state, observation)              # KernelEnvironment.reset
>>> MONITOR.on_step(episode_id, code, observation, t0)  # KernelEnvironment.step
>>> MONITOR.summary()                                  # GET /monitor
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Optional

from environment.config import setting, setting_flag
from environment import audit
from environment.agent import summarize_action
from environment.evaluation import flags as F
from environment.training.reward_rule import episode_reward
from environment.trajectory import EpisodeRecord, env_version, step_record

ENABLE_VAR = "KERNEL_ENV_MONITOR"
TOKEN_VAR = "KERNEL_ENV_MONITOR_TOKEN"
CAPACITY_VAR = "KERNEL_ENV_MONITOR_EPISODES"
DEFAULT_CAPACITY = 200
HIST_BINS = 10  # reward histogram: [0, 0.1), ..., [0.9, 1.0]
KINDS = ("all", "success", "failed", "hack", "harness_error", "no_submission")


def enabled() -> bool:
    return setting_flag(ENABLE_VAR)


def token() -> Optional[str]:
    return setting(TOKEN_VAR) or None


@dataclass
class _Entry:
    record: EpisodeRecord
    started: float
    updated: float
    harness_errors: list[dict[str, Any]] = field(default_factory=list)
    hacked_steps: int = 0
    flags: Counter = field(default_factory=Counter)
    env_ms: float = 0.0

    @property
    def judged(self) -> list[float]:
        return [r for r in self.record.rewards if r is not None]

    @property
    def reward(self) -> Optional[float]:
        return episode_reward(self.record.rewards)

    def kind_matches(self, kind: str) -> bool:
        return {"all": True, "success": self.record.success, "failed": bool(self.judged) and not self.record.success,
                "hack": self.hacked_steps > 0, "harness_error": bool(self.harness_errors),
                "no_submission": not self.record.steps}[kind]

    def summary(self) -> dict[str, Any]:
        r = self.record
        return {"episode_id": r.episode_id, "task_id": r.task_id, "seed": r.seed, "max_turns": r.max_turns,
                "steps": len(r.steps), "rewards": r.rewards, "reward": self.reward, "success": r.success,
                "hacked": self.hacked_steps > 0, "flags": dict(self.flags), "harness_errors": len(self.harness_errors),
                "code_hashes": [s.action_summary.split()[0].removeprefix("sha=") for s in r.steps],
                "done": bool(r.steps and r.steps[-1].done), "env_ms": round(self.env_ms, 1),
                "started_at": _iso(self.started), "updated_at": _iso(self.updated)}


class EpisodeMonitor:
    """A thread-safe ring buffer of the most recent ``capacity`` episodes (oldest dropped first)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, clock=time.time):
        self.capacity = max(1, capacity)
        self._clock = clock
        self._lock = threading.Lock()
        self._episodes: OrderedDict[str, _Entry] = OrderedDict()
        self._evaluations: list[float] = []  # when each step was judged (or failed), for evaluations per minute
        self._dropped = 0
        self._audit = audit.Tally()  # independent signals' disagreements and people's labels

    # -- hooks of KernelEnvironment ---------------------------------------------------------
    def on_reset(self, state: Any, observation: Any) -> Any:
        if not enabled() or not state.episode_id:
            return observation
        now = self._clock()
        record = EpisodeRecord.start(observation, episode_id=state.episode_id, seed=state.seed, player="remote",
                                     env_version=env_version())
        with self._lock:
            self._episodes.pop(state.episode_id, None)
            self._episodes[state.episode_id] = _Entry(record, now, now)
            while len(self._episodes) > self.capacity:
                self._episodes.popitem(last=False)
                self._dropped += 1
        return observation

    def on_step(self, episode_id: Optional[str], code: str, observation: Any, started: float) -> Any:
        """Record one step; ``started`` is ``time.monotonic()`` before the evaluation."""
        if not enabled() or not episode_id:
            return observation
        env_ms = (time.monotonic() - started) * 1000.0
        now = self._clock()
        with self._lock:
            entry = self._episodes.get(episode_id)
            self._evaluations.append(now)
            self._trim_evaluations(now)
            if entry is None:  # evicted mid-episode
                return observation
            step = step_record(len(entry.record.steps) + 1, code, observation, action_summary=summarize_action(code),
                               done=observation.done, env_latency_ms=env_ms)
            entry.record.add_step(step)
            entry.updated, entry.env_ms = now, entry.env_ms + env_ms
            findings = observation.evaluation.findings if observation.evaluation is not None else []
            entry.flags.update(f.name for f in findings)
            self._audit.on_step(observation, now)
            entry.hacked_steps += any(f.hack for f in findings)
            if observation.outcome == "harness_error":
                entry.harness_errors.append({"episode_id": episode_id, "task_id": entry.record.task_id,
                                             "step": step.step, "error": observation.error, "at": _iso(now)})
        return observation

    def on_label(self, episode_id: str, step: int, label: str, note: str = "") -> bool:
        """Count a person's label (and keep it on the episode when the monitor holds it); False when the episode
        is not in the buffer (the label is still counted)."""
        audit.check_label(label, note)
        if not enabled():
            return False
        with self._lock:
            self._audit.on_label(label)
            entry = self._episodes.get(episode_id)
            if entry is None or not 1 <= step <= len(entry.record.steps):
                return False
            entry.record.add_label(step, label, note)
            return True

    def review(self, limit: int = 20, seed: Optional[int] = None) -> list[dict[str, Any]]:
        """Unlabelled steps to look at: flagged disagreements and vetoes first, then a seeded random sample."""
        with self._lock:
            steps = [(e.record.episode_id, s.step, {**(s.observation or {}), "evaluation": _signals_of(s)},
                      next((x.label for x in e.record.labels if x.step == s.step), None))
                     for e in self._episodes.values() for s in e.record.steps]
        return audit.review_sample(steps, limit, seed)

    def _trim_evaluations(self, now: float) -> None:
        cutoff = now - 3600.0
        while self._evaluations and self._evaluations[0] < cutoff:
            self._evaluations.pop(0)

    # -- readers ----------------------------------------------------------------------------
    def clear(self) -> None:
        with self._lock:
            self._episodes.clear()
            self._evaluations.clear()
            self._dropped = 0
            self._audit.clear()

    def episode(self, episode_id: str) -> Optional[EpisodeRecord]:
        with self._lock:
            entry = self._episodes.get(episode_id)
            return entry.record.model_copy(deep=True) if entry else None

    def episodes(self, limit: int = 50, task: Optional[str] = None, kind: str = "all",
                 sample: bool = False, seed: Optional[int] = None) -> list[dict[str, Any]]:
        """Summaries, newest first (or a random sample of ``limit`` when ``sample``)."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; valid: {', '.join(KINDS)}")
        with self._lock:
            chosen = [e for e in reversed(self._episodes.values())
                      if (task is None or e.record.task_id == task) and e.kind_matches(kind)]
            if sample and len(chosen) > limit:
                chosen = random.Random(seed).sample(chosen, limit)
            return [e.summary() for e in chosen[:max(0, limit)]]

    def summary(self, recent: int = 20) -> dict[str, Any]:
        now = self._clock()
        with self._lock:
            entries = list(self._episodes.values())
            evaluations = list(self._evaluations)
            dropped = self._dropped
            signals = self._audit.summary(now, sum(len(e.record.steps) for e in self._episodes.values()))
        steps = [(e, s) for e in entries for s in e.record.steps]
        judged_steps = sum(len(e.judged) for e in entries)
        hacked = sum(e.hacked_steps for e in entries)
        flag_counts: Counter = Counter()
        for e in entries:
            flag_counts.update(e.flags)
        errors = [err for e in entries for err in e.harness_errors]
        tasks: dict[str, dict[str, Any]] = {}
        for task_id in sorted({e.record.task_id for e in entries}):
            mine = [e for e in entries if e.record.task_id == task_id]
            tasks[task_id] = _task_summary(mine)
        window = [t for t in evaluations if t >= now - 60.0]
        span_min = (now - min(e.started for e in entries)) / 60.0 if entries else 0.0
        return {
            "enabled": True, "capacity": self.capacity, "episodes": len(entries), "dropped_episodes": dropped,
            "steps": len(steps), "judged_steps": judged_steps,
            "success_rate": _rate(sum(e.record.success for e in entries), sum(bool(e.judged) for e in entries)),
            "hack_rate": _rate(hacked, judged_steps),
            "flags": dict(flag_counts.most_common()),
            "hack_flags": {k: v for k, v in flag_counts.most_common() if F.is_hack(k)},
            "evaluations_per_minute": {"last_minute": len(window),
                                       "buffer": round(len(steps) / span_min, 2) if span_min > 0 else 0.0},
            "harness_errors": {"count": len(errors), "recent": errors[-10:]},
            "signals": signals,
            "tasks": tasks,
            "recent": [e.summary() for e in reversed(entries[-recent:])] if recent else [],
            "generated_at": _iso(now),
        }


def _task_summary(entries: list[_Entry]) -> dict[str, Any]:
    counts = [0] * HIST_BINS
    scored = [e for e in entries if e.reward is not None]  # an episode the environment failed has no reward
    for e in scored:
        counts[min(HIST_BINS - 1, int(e.reward * HIST_BINS))] += 1
    judged = sum(len(e.judged) for e in entries)
    return {
        "episodes": len(entries), "steps": sum(len(e.record.steps) for e in entries),
        "no_submission": sum(not e.record.steps for e in entries),
        "success_rate": _rate(sum(e.record.success for e in entries), sum(bool(e.judged) for e in entries)),
        "hack_rate": _rate(sum(e.hacked_steps for e in entries), judged),
        "mean_reward": round(sum(e.reward for e in scored) / len(scored), 4) if scored else None,
        "reward_histogram": {"edges": [round(i / HIST_BINS, 2) for i in range(HIST_BINS + 1)], "counts": counts},
        "harness_errors": sum(len(e.harness_errors) for e in entries),
    }


def _signals_of(step: Any) -> dict[str, Any]:
    """The step's signals as plain dicts (from its stored evaluation record)."""
    if not step.evaluation_json:
        return {}
    return {"signals": json.loads(step.evaluation_json).get("signals") or []}


def _rate(part: int, whole: int) -> Optional[float]:
    return round(part / whole, 4) if whole else None


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def _capacity() -> int:
    raw = setting(CAPACITY_VAR)
    return int(raw) if raw.strip().isdigit() else DEFAULT_CAPACITY


MONITOR = EpisodeMonitor(_capacity())
