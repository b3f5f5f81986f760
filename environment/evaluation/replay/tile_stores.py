"""Where the programs of a sampled producer store, as the dependency closure (closure.py) follows them: a program's
stores as byte runs, whether they lie in the tile the sampled programs predict for it, and the programs the closure
ran that stored where the sample says they may not (outside their tile, or in the launch's idle part). `p` is a
closure.Producer (closure.py imports this module, not the other way round)."""
from __future__ import annotations

from typing import Any

import numpy as np

from environment.evaluation.modeled.triton_launch import TritonLaunch


def segments_of(addrs: np.ndarray, itemsize: np.ndarray) -> np.ndarray:
    """[start, end) byte runs covering the stored elements (addresses with their item sizes)."""
    order = np.argsort(addrs, kind="stable")
    start, end = addrs[order], addrs[order] + itemsize[order]
    reach = np.maximum.accumulate(end)
    new = np.ones(start.size, dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], start.size) - 1
    return np.stack([start[first], reach[last]], axis=1)


def stores_of(store_log: list, owners: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(byte addresses, item sizes) of the stores run program k made."""
    mine = [(a, s) for (a, s), o in zip(store_log, owners) if o == k and a.size]
    return (np.concatenate([a for a, _ in mine]).astype(np.int64),
            np.concatenate([np.full(a.size, s, dtype=np.int64) for a, s in mine]))


def inside(segments: np.ndarray, addrs: np.ndarray, items: np.ndarray, offset: int) -> bool:
    """Whether every stored byte lies in `segments` (a [start, end) run list relative to `offset`): the program
    stores what the widest run program's stores, moved to it, predict (a masked edge stores a subset). A
    marker stored beside each row, moving 4 bytes per program where the rows move 12004, lies outside them."""
    rel = addrs - offset
    at = np.searchsorted(segments[:, 0], rel, side="right") - 1
    ok = at >= 0
    at = np.maximum(at, 0)
    return bool((ok & (rel + items <= segments[at, 1])).all())


def _storing(done: TritonLaunch) -> set[int]:
    """Indices (in run order) of the programs of `done` that stored anything."""
    return {int(o) for (a, _), o in zip(done.store_log, done.store_program) if a.size}


def outside_tiles(p: Any, done: TritonLaunch, programs: list) -> tuple | None:
    """The first of `programs` (run by the closure, in order) that stored outside the tile p's sampled programs
    predict for it (a rare program storing elsewhere, which only the closure runs), else None."""
    owners, storing = np.asarray(done.store_program, dtype=np.int64), _storing(done)
    for k, q in enumerate(programs):
        if k in storing and not inside(p.segments, *stores_of(done.store_log, owners, k),
                                       int(p.offsets(np.asarray(q, dtype=np.int64)))):
            return tuple(q)
    return None


def idle_writer(p: Any, done: TritonLaunch, programs: list) -> tuple | None:
    """The first of `programs` (run by the closure, in order) lying in p's idle part (past its last tile, where the
    sample proved programs store nothing and the model gives them no wave slot) that stored anything, else None."""
    if p.idle is None:
        return None
    axis, end = p.idle
    storing = _storing(done)
    return next((tuple(q) for k, q in enumerate(programs) if q[axis] >= end and k in storing), None)
