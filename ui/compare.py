"""Two players on the same task and seed: a person's Play-tab episode or a model, on each side.

Model sides play fresh episodes in their own environment connections, turn by turn in
alternation, so the page streams both as they go.
"""
from __future__ import annotations

from typing import Iterator, Optional

from environment.trajectory import EpisodeRecord
from ui.players import ModelSettings, PlayerFailure, model_turn
from ui.verdict import verdict_of
from ui.session import PlayError, Session

YOU = "You (your latest Play episode on this task and seed)"


def your_episode(session: Session, task_id: str, seed: int) -> EpisodeRecord:
    for record in reversed(session.episodes):
        if record.player in ("human", "mixed") and record.task_id == task_id and record.seed == seed and record.steps:
            return record
    raise PlayError(f"you have not played {task_id} with seed {seed} yet: play it in the Play tab first "
                    "(or pick a model for both sides)")


def run(session: Session, task_id: str, seed: int, max_turns: int, sides: tuple[str, str],
        settings: tuple[Optional[ModelSettings], Optional[ModelSettings]], token: Optional[str],
        ) -> Iterator[tuple[list[tuple[str, Optional[EpisodeRecord]]], str]]:
    """Yields ([(name, record) for both sides], status) after every turn."""
    names = [_name(side, i) for i, side in enumerate(sides)]
    records: list[Optional[EpisodeRecord]] = [None, None]
    handles = [None, None]
    for i, side in enumerate(sides):
        if side == YOU:
            records[i] = your_episode(session, task_id, seed)
        else:
            handle = session.slot(f"compare-{'ab'[i]}")
            s = settings[i]
            handle.reset(task_id, seed, max_turns, player="model", model=s.model, temperature=s.temperature)
            session.started(handle.record)
            records[i], handles[i] = handle.record, handle
    yield list(zip(names, records)), "Both players are ready."
    for turn in range(1, max_turns + 1):
        for i, handle in enumerate(handles):
            if handle is None or handle.done:
                continue
            yield list(zip(names, records)), f"Turn {turn}: {names[i]} is playing…"
            turn = model_turn(handle, settings[i], token)  # a reply without code uses no turn of the episode
            note = (f"no usable code ({turn.error}); no turn used" if isinstance(turn, PlayerFailure)
                    else verdict_of(turn).title)
            yield list(zip(names, records)), f"Turn {turn}: {names[i]} played, {note}."
        if all(h is None or h.done for h in handles):
            break
    yield list(zip(names, records)), "Comparison finished."


def _name(side: str, i: int) -> str:
    label = "you" if side == YOU else side
    return f"{'AB'[i]}: {label}"
