"""Curricula: difficulty that follows the learner (RLVE-style), kept server-side per name.

``reset(curriculum="<name>")`` asks the named curriculum for a task: it draws a generated task
(tasks/generator) from a window of levels (the current level most of the time, the one below it
otherwise), and records how the episode went when it ends. When the success rate of the last
``episodes`` episodes played at the current level reaches ``threshold``, the level goes up. The
state lives in this process, one record per name, so every connection (TRL opens one per
generation) shares it; ``GET /curricula/<name>`` shows the level and the history.

An episode succeeds when one of its submissions was correct (the reward's correctness gate; the
target speedup of a level is stated in the task prompt but not required to advance). A level only
goes up; an episode abandoned before its last turn counts with what it reached.
Knobs: KERNEL_ENV_CURRICULUM_EPISODES (8), KERNEL_ENV_CURRICULUM_THRESHOLD (0.75).
"""
from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from environment.config import setting
from environment.tasks.generator import FAMILIES, LEVELS, task_id

NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
LOWER_LEVEL_SHARE = 0.25  # of draws from the level below the current one (keeps what was learned in play)
HISTORY_KEPT = 500


@dataclass
class Curriculum:
    name: str
    episodes: int = field(default_factory=lambda: int(setting("KERNEL_ENV_CURRICULUM_EPISODES")))
    threshold: float = field(default_factory=lambda: float(setting("KERNEL_ENV_CURRICULUM_THRESHOLD")))
    level: int = min(LEVELS)
    draws: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    promotions: list[dict[str, Any]] = field(default_factory=list)
    open: dict[str, dict[str, Any]] = field(default_factory=dict)   # episode id -> the draw, until it is recorded

    def window(self) -> list[int]:
        return sorted({max(min(LEVELS), self.level - 1), self.level})

    def draw(self, episode_id: str, seed: Optional[int] = None) -> str:
        rng = random.Random(f"{self.name}/{self.draws}" if seed is None else f"{self.name}/seed/{seed}")
        self.draws += 1
        lower = self.window()[0]
        level = lower if lower < self.level and rng.random() < LOWER_LEVEL_SHARE else self.level
        tid = task_id(rng.choice(FAMILIES), level, rng.randrange(10**6))
        self.open[episode_id] = {"task_id": tid, "level": level}
        while len(self.open) > HISTORY_KEPT:  # episodes never finished (a stateless HTTP reset): forget the oldest
            self.open.pop(next(iter(self.open)))
        return tid

    def record(self, episode_id: str, success: bool, best_score: float) -> None:
        drawn = self.open.pop(episode_id, None)
        if drawn is None:
            return
        self.history.append(dict(drawn, episode_id=episode_id, success=bool(success),
                                 best_score=round(float(best_score), 4), at=time.time()))
        del self.history[:-HISTORY_KEPT]
        recent = [h["success"] for h in self.history if h["level"] == self.level][-self.episodes:]
        if len(recent) >= self.episodes and sum(recent) / len(recent) >= self.threshold and self.level < max(LEVELS):
            self.promotions.append({"from": self.level, "to": self.level + 1, "after_episodes": len(self.history),
                                    "success_rate": round(sum(recent) / len(recent), 3)})
            self.level += 1

    def snapshot(self) -> dict[str, Any]:
        at_level = [h["success"] for h in self.history if h["level"] == self.level][-self.episodes:]
        return {"name": self.name, "level": self.level, "window": self.window(), "max_level": max(LEVELS),
                "episodes_to_judge": self.episodes, "threshold": self.threshold,
                "recent_success_rate": round(sum(at_level) / len(at_level), 3) if at_level else None,
                "episodes": len(self.history), "open_episodes": len(self.open),
                "promotions": list(self.promotions), "history": list(self.history[-100:])}


_curricula: dict[str, Curriculum] = {}
_lock = threading.Lock()


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"curriculum must be a name of 1-64 letters, digits, '_', '-' or '.', got {name!r}")
    return name


def draw(name: str, episode_id: str, seed: Optional[int] = None) -> str:
    """The task id the named curriculum hands this episode (the curriculum is created on first use)."""
    with _lock:
        curriculum = _curricula.setdefault(check_name(name), Curriculum(name))
        return curriculum.draw(episode_id, seed)


def record(name: str, episode_id: str, success: bool, best_score: float) -> None:
    with _lock:
        if name in _curricula:
            _curricula[name].record(episode_id, success, best_score)


def snapshot(name: str) -> Optional[dict[str, Any]]:
    with _lock:
        curriculum = _curricula.get(name)
        return curriculum.snapshot() if curriculum else None
