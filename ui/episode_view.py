"""An episode, or several, as tables and text: the timeline of verdicts, the best step, the winner
of a comparison and the ranking of its players."""
from __future__ import annotations

from typing import Optional, Sequence

import pandas as pd

from environment.trajectory import EpisodeRecord, StepRecord
from ui.markup import esc
from ui.verdict import num, obs_of, verdict_of

TIMELINE_COLUMNS = ["step", "score", "best so far", "verdict", "speedup"]


def timeline_frame(record: Optional[EpisodeRecord]) -> pd.DataFrame:
    if record is None or not record.steps:
        return pd.DataFrame(columns=TIMELINE_COLUMNS)
    rows, best = [], 0.0
    for s in record.steps:
        best = max(best, s.reward if s.reward is not None else 0.0)
        speedup = obs_of(s).get("speedup")
        rows.append([s.step, num(s.reward), num(best), verdict_of(s).short,
                     f"{num(speedup)}x" if speedup is not None else "–"])
    return pd.DataFrame(rows, columns=TIMELINE_COLUMNS)


def best_step(record: Optional[EpisodeRecord]) -> Optional[StepRecord]:
    if record is None:
        return None
    stepped = [s for s in record.steps if s.code is not None]
    return max(stepped, key=lambda s: s.reward, default=None)


def winner_html(a: tuple[str, Optional[EpisodeRecord]], b: tuple[str, Optional[EpisodeRecord]]) -> str:
    """Best score wins; a tie goes to the one that reached it in fewer steps."""
    (na, ra), (nb, rb) = a, b
    if ra is None or rb is None or not ra.steps or not rb.steps:
        return '<div class="kp-winner kp-muted">No result yet.</div>'

    def key(r: EpisodeRecord) -> tuple[float, int]:
        best = r.score
        first = next((s.step for s in r.steps if s.reward == best), len(r.steps))
        return best, -first

    ka, kb = key(ra), key(rb)
    if ka == kb:
        text = f"Tie: both reached {num(ra.score)} in {-ka[1]} step(s)."
        winner = "tie"
    else:
        winner, loser = (na, nb) if ka > kb else (nb, na)
        text = (f"Winner {winner}, best score {num(max(ka, kb)[0])} (step {-max(ka, kb)[1]}) against "
                f"{num(min(ka, kb)[0])} (step {-min(ka, kb)[1]}) for {loser}.")
    return f'<div class="kp-winner" data-winner="{esc(winner)}">{esc(text)}</div>'


def ranking_html(ranked: Sequence[tuple[str, EpisodeRecord]]) -> str:
    """Players ranked by best score, then by fewer steps to reach it; the first is the winner."""
    from ui.compare import steps_to_best
    if not ranked:
        return '<div class="kp-winner kp-muted">No result yet.</div>'
    top = ranked[0]
    tie = len(ranked) > 1 and (ranked[1][1].score, steps_to_best(ranked[1][1])) == (top[1].score,
                                                                                   steps_to_best(top[1]))
    lines = "".join(f"<li>{esc(n)}: best {num(r.score)} at step {steps_to_best(r)}</li>" for n, r in ranked)
    head = "Tie at the top" if tie else f"Winner {top[0]}"
    return (f'<div class="kp-winner" data-winner="{"tie" if tie else esc(top[0])}">{esc(head)}'
            f'<ol class="kp-ranking">{lines}</ol></div>')
