"""Which stored output elements hold no final value: an element one launch stored into an allocation that a later
sampled launch rewrites in place (a GEMM then an epilogue over its output, an add then a GELU over the result)
holds a final value only if no unrun program of the later launch stores there. The replay runs a sample of each
launch, so where the earlier launch's programs (sampled, or run by the dependency closure for the later launch's
sample) stored and the later launch's sampled programs did not, the element holds an intermediate value: compared
with the reference, an honest in-place pass would read as a wrong result.

Such an element is dropped from the comparison only where the later launch is a tiling the closure follows
(closure.Producer.steps) and the tile its sampled programs predict for an unrun program in its busy part covers the
element: on a GPU that program stores there last. What the later launch stores is compared where its own programs
ran, like any launch's. A later launch that is no tiling, or a grid past the prediction's bound, drops nothing."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.replay.closure import PREDICT_GRID, predict


def stale(base: int, item: int, last: np.ndarray, producers: list[Any]) -> np.ndarray:
    """Flags over the storage's items (`base`: its first byte; `item`: the element size; `last`: per item, the
    order of the last sampled launch whose programs stored it, -1 where none did) of the items an unrun program of
    a later sampled launch (one of `producers`) stores over."""
    drop = np.zeros(last.size, dtype=bool)
    for q in producers:
        if q.steps is None or math.prod(q.grid) > PREDICT_GRID:
            continue
        lo, hi = base // SECTOR, -(-(base + last.size * item) // SECTOR)
        if not any(a < hi and lo < b for a, b in q.spans):
            continue
        earlier = np.flatnonzero((last >= 0) & (last < q.order) & ~drop)
        if not earlier.size:
            continue
        starts = base + earlier * item
        programs = [c for c in predict(q, np.unique(starts // SECTOR)) if q.idle is None or c[q.idle[0]] < q.idle[1]]
        if not programs:
            continue
        offs = q.offsets(np.asarray(programs, dtype=np.int64))
        runs = np.stack([(q.segments[:, 0][None, :] + offs[:, None]).ravel(),
                         (q.segments[:, 1][None, :] + offs[:, None]).ravel()], axis=1)
        runs = runs[np.argsort(runs[:, 0], kind="stable")]
        reach = np.maximum.accumulate(runs[:, 1])
        at = np.searchsorted(runs[:, 0], starts + item, side="left") - 1   # the last run starting before the item ends
        over = at >= 0
        over[over] = reach[at[over]] > starts[over]
        drop[earlier[over]] = True
    return drop
