"""Which stored output elements hold no final value: an element one launch stored into an allocation that a later
sampled launch rewrites in place (a GEMM then an epilogue over its output, an add then a GELU over the result)
holds a final value only if no unrun program of the later launch stores there. The replay runs a sample of each
launch, so where the earlier launch's programs (sampled, or run by the dependency closure for the later launch's
sample) stored and the later launch's sampled programs did not, the element holds an intermediate value: compared
with the reference, an honest in-place pass would read as a wrong result.

Such an element is dropped from the comparison only where the later launch is a tiling the closure follows (a
producer.Tiling of each allocation it stores into, the element's among them) and an unrun program in its busy part
stores there last on a GPU, as far as the sample proves it: the program's class of positions (first, interior or
last on each axis) had every sampled program store exactly one tile into that allocation, none store nothing there
(tile_stores.class_tiles; a class none was run of stores as the class with its interior axes at the first index),
and that tile moved to it covers the element. The closure's prediction from the widest program is a superset (red
team a274, a275: corners storing a wide run into padding beside the output made every unrun program's predicted
tile cover the whole output, which they never stored). What the later launch stores is compared where its own
programs ran, like any launch's. A later launch that is no tiling, or a grid past the prediction's bound, drops nothing."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.replay.closure import PREDICT_GRID, predict
from environment.evaluation.replay.tile_stores import class_tile, position_class


def stale(base: int, item: int, last: np.ndarray, producers: list[Any]) -> np.ndarray:
    """Flags over the storage's items (`base`: its first byte; `item`: the element size; `last`: per item, the
    order of the last sampled launch whose programs stored it, -1 where none did) of the items an unrun program of
    a later sampled launch (one of `producers`) stores over."""
    drop = np.zeros(last.size, dtype=bool)
    lo, hi = base // SECTOR, -(-(base + last.size * item) // SECTOR)
    for q in producers:
        if not q.parts or math.prod(q.grid) > PREDICT_GRID:
            continue
        for part in q.parts:   # the map of the allocation this storage lies in (a launch may store into several)
            if not (part.span[0] < hi and lo < part.span[1]):
                continue
            earlier = np.flatnonzero((last >= 0) & (last < q.order) & ~drop)
            if not earlier.size:
                continue
            starts = base + earlier * item
            programs = [c for c in predict(q, np.unique(starts // SECTOR), [part])
                        if q.idle is None or c[q.idle[0]] < q.idle[1]]
            tiles = [(c, class_tile(part.tiles, position_class(c, q.grid, q.idle))) for c in programs]
            runs = [tile + int(part.offsets(np.asarray(c, dtype=np.int64))) for c, tile in tiles if tile is not None]
            if not runs:
                continue
            runs = np.concatenate(runs)
            runs = runs[np.argsort(runs[:, 0], kind="stable")]
            reach = np.maximum.accumulate(runs[:, 1])
            at = np.searchsorted(runs[:, 0], starts + item, side="left") - 1   # the last run starting before the item ends
            over = at >= 0
            over[over] = reach[at[over]] > starts[over]
            drop[earlier[over]] = True
    return drop
