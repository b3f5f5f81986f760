"""Where the programs of a sampled producer store, as the dependency closure (closure.py) follows them: a program's
stores as byte runs, whether they lie in the tile the sampled programs predict for it, and the programs the closure
ran that stored where the sample says they may not (outside their tile, or in the launch's idle part). `p` is a
producer.Producer (producer.py imports this module, not the other way round)."""
from __future__ import annotations

from typing import Any

import numpy as np

from environment.evaluation.modeled.byte_runs import runs_of
from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.modeled.triton_launch import TritonLaunch


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
    predict for it in each allocation (a rare program storing elsewhere, which only the closure runs), or into none
    of p's allocations, else None."""
    owners, storing = np.asarray(done.store_program, dtype=np.int64), _storing(done)
    for k, q in enumerate(programs):
        if k not in storing:
            continue
        addrs, items = stores_of(done.store_log, owners, k)
        placed = np.zeros(addrs.size, dtype=bool)
        for part in p.parts:
            here = (addrs >= part.span[0] * SECTOR) & (addrs < part.span[1] * SECTOR)
            placed |= here
            if not inside(part.segments, addrs[here], items[here], int(part.offsets(np.asarray(q, dtype=np.int64)))):
                return tuple(q)
        if not placed.all():
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


def position_class(pos: tuple, grid: tuple, idle: tuple | None) -> tuple:
    """Where a program lies on each axis: 0 the first, 1 interior, 2 the last (of the busy part, on the axis an idle
    part ends: its last busy slice is the masked edge)."""
    ends = [idle[1] if idle is not None and a == idle[0] else g for a, g in enumerate(grid)]
    return tuple(0 if c == 0 else 2 if c == g - 1 else 1 for c, g in zip(pos, ends))


def class_tiles(p: Any, part: Any, store_log: list, owners: np.ndarray, chosen: list) -> dict[tuple, np.ndarray | None]:
    """Per class of positions (position_class) the launch ran programs of, in its busy part: the [start, end) byte
    runs, relative to the first byte p's tiling of one allocation (`part`, a producer.Tiling) predicts for the
    program, that every such program of the class stored there, or None where they did not all store exactly those
    runs (one stored nothing there, or other runs). What an unrun program of the class stores there, as far as the
    sample proves it (a tile predicted from the widest program is a superset: final_values may not rely on it)."""
    mine_of: dict[int, list] = {}   # the store log by program, in one pass (a persistent program stores many times)
    for (a, size), o in zip(part.log(store_log), owners):
        if a.size:
            mine_of.setdefault(int(o), []).append((a, size))
    tiles: dict[tuple, np.ndarray | None] = {}
    for k, (pos, _) in enumerate(chosen):
        if p.idle is not None and pos[p.idle[0]] >= p.idle[1]:
            continue
        key = position_class(pos, p.grid, p.idle)
        if k not in mine_of:
            tiles[key] = None   # a busy program storing nothing: its class's tile is no rule
            continue
        mine = runs_of(*stores_of(mine_of[k], np.full(len(mine_of[k]), k), k)) - \
            int(part.offsets(np.asarray(pos, dtype=np.int64)))
        if key not in tiles:
            tiles[key] = mine
        elif tiles[key] is not None and not np.array_equal(tiles[key], mine):
            tiles[key] = None
    return tiles


def class_tile(tiles: dict, key: tuple) -> np.ndarray | None:
    """The tile an unrun program of class `key` stores (class_tiles): its class's, or, for a class the launch ran
    no program of, the class with its interior axes set to the first index (a tiling masks its last tiles, not its
    first: an edge between two corners stores as the first of them), else None."""
    if key in tiles:
        return tiles[key]
    return tiles.get(tuple(0 if c == 1 else c for c in key))
