"""Two to four players on the same task and seed: a person's Play-tab episode or a model, on each side.

Model sides play fresh episodes in their own environment connections, turn by turn in
alternation, so the page streams both as they go.
"""
from __future__ import annotations

import difflib
from typing import Iterator, Optional, Sequence

import pandas as pd

from environment.trajectory import EpisodeRecord
from ui.players import ModelSettings, PlayerFailure, model_turn
from ui.verdict import num, verdict_of
from ui.session import PlayError, Session

YOU = "You (your latest Play episode on this task and seed)"


def your_episode(session: Session, task_id: str, seed: int) -> EpisodeRecord:
    for record in reversed(session.episodes):
        if record.player in ("human", "mixed") and record.task_id == task_id and record.seed == seed and record.steps:
            return record
    raise PlayError(f"you have not played {task_id} with seed {seed} yet: play it in the Play tab first "
                    "(or pick a model for both sides)")


def run(session: Session, task_id: str, seed: int, max_turns: int, sides: Sequence[str],
        settings: Sequence[Optional[ModelSettings]], token: Optional[str],
        ) -> Iterator[tuple[list[tuple[str, Optional[EpisodeRecord]]], str, str]]:
    """Yields ([(name, record) for every side], status, kind) after every turn; 2 to 4 sides. The last
    status says who could not play and why (amber when some side could not, red when none played)."""
    names = [_name(side, i) for i, side in enumerate(sides)]
    records: list[Optional[EpisodeRecord]] = [None] * len(sides)
    handles: list = [None] * len(sides)
    failures: dict[int, str] = {}  # side -> its last player error
    for i, side in enumerate(sides):
        if side == YOU:
            records[i] = your_episode(session, task_id, seed)
        else:
            handle = session.slot(f"compare-{'abcd'[i]}")
            s = settings[i]
            handle.reset(task_id, seed, max_turns, player="model", model=s.model, temperature=s.temperature)
            session.started(handle.record)
            records[i], handles[i] = handle.record, handle
    yield list(zip(names, records)), f"{len(sides)} players are ready.", "busy"
    for turn in range(1, max_turns + 1):
        for i, handle in enumerate(handles):
            if handle is None or handle.done:
                continue
            yield list(zip(names, records)), f"Turn {turn}: {names[i]} is playing…", "busy"
            result = model_turn(handle, settings[i], token)  # a reply without code uses no turn of the episode
            if isinstance(result, PlayerFailure):
                failures[i] = result.error
                note = f"no usable code ({result.error}); no turn used"
            else:
                note = verdict_of(result).title
            yield list(zip(names, records)), f"Turn {turn}: {names[i]} played, {note}.", "busy"
        if all(h is None or h.done for h in handles):
            break
    yield (list(zip(names, records)),) + outcome(names, records, failures)


def outcome(names: Sequence[str], records: Sequence[Optional[EpisodeRecord]], failures: dict[int, str],
            ) -> tuple[str, str]:
    """The comparison's last status and its kind: green only when every side played."""
    idle = [i for i, r in enumerate(records) if r is None or not r.steps]
    if not idle:
        return "Comparison finished.", "ok"
    why = "; ".join(f"{names[i]} could not play ({failures.get(i, 'no step')})" for i in idle)
    if len(idle) == len(records):
        return f"Comparison failed: no player played a step. {why}.", "error"
    return f"Comparison finished, but {why}: its side shows no score.", "warn"


def _name(side: str, i: int) -> str:
    label = "you" if side == YOU else side
    return f"{'ABCD'[i]}: {label}"


def steps_to_best(record: EpisodeRecord) -> int:
    return next((s.step for s in record.steps if s.reward == record.score), len(record.steps))


def ranking(pairs: Sequence[tuple[str, Optional[EpisodeRecord]]]) -> list[tuple[str, EpisodeRecord]]:
    """Best score first; on a tie, fewer steps to reach it."""
    played = [(n, r) for n, r in pairs if r is not None and r.steps]
    return sorted(played, key=lambda p: (-p[1].score, steps_to_best(p[1])))


def code_diff(a: Optional[str], b: Optional[str], name_a: str, name_b: str) -> str:
    """A unified diff of two sources ("" when either is missing or they are equal)."""
    if not a or not b or a == b:
        return ""
    return "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                        fromfile=name_a, tofile=name_b, n=2))


LEADERBOARD_COLUMNS = ["rank", "player", "best score", "steps to best", "episodes", "hacks"]


def leaderboard(records: Sequence[EpisodeRecord]) -> pd.DataFrame:
    """Per player (a model id, or "person"): the best score, the fewest steps to reach it, how many
    episodes, and how many steps were caught hacking. Players are never browsers: no one is named."""
    best: dict[str, list] = {}
    for r in records:
        who = r.model if r.player == "model" and r.model else ("person" if r.player in ("human", "mixed") else r.player)
        hacks = sum(1 for s in r.steps if any(_hack(f) for f in (s.observation or {}).get("flags") or []))
        row = best.setdefault(who, [who, 0.0, 0, 0, 0])
        if r.score > row[1] or (r.score == row[1] and r.score > 0 and steps_to_best(r) < row[2]):
            row[1], row[2] = r.score, steps_to_best(r)
        row[3] += 1
        row[4] += hacks
    rows = sorted(best.values(), key=lambda x: (-x[1], x[2] or 99))
    return pd.DataFrame([[i + 1, w, num(b), s or "–", n, h] for i, (w, b, s, n, h) in enumerate(rows)],
                        columns=LEADERBOARD_COLUMNS)


def _hack(flag: str) -> bool:
    from environment.evaluation import flags as F
    return F.is_hack(flag)
