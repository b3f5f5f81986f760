"""What the programs of a sampled launch store, as the dependency closure (closure.py) and the compare of final values
(final_values.py) follow them: a Producer for each sampled launch that left programs unrun, with a Tiling for each
allocation its programs stored into. In one allocation, a launch's programs are a tiling when the first byte each run
program stores there is an affine function of its grid position and every run program's stores there lie within the
widest run program's stores there, moved by that function (both checked on every run program); program q's stores
there are then predicted as those (a superset at masked edges). A program storing into two allocations (its row of
the output and the row's statistic beside it in another buffer, a saved rstd) follows one map per allocation: the
two move by different steps, so no single map holds both. A launch is a tiling the closure can follow only when every
allocation it stored into is one, and its programs' plain stores do not overlap."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from environment.evaluation.modeled.byte_runs import runs_of
from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.modeled.triton_launch import TritonLaunch
from environment.evaluation.replay.tile_stores import inside, stores_of

_EMPTY = np.zeros(0, dtype=np.int64)
# Why a producer is no tiling the closure can follow (ClosureLimit's message, {p}: the producer)
AFFINE = "where a program of {p} stores is no affine function of its grid position (a tiling it can follow)"
OVERLAP = ("two programs of {p} store the same bytes, one with a plain store (a tiling's tiles do not overlap: a slot "
           "list or flag every program writes is no tiling it can follow)")


@dataclass
class Tiling:
    """Where a producer's programs store in one allocation."""
    span: tuple                 # the allocation's sector interval [first, end)
    base: tuple                 # a run program's position and the first byte it stored here: (position, byte)
    steps: tuple                # bytes that first byte moves per step on each axis
    segments: np.ndarray        # the widest run program's stores here as [start, end) byte runs relative to its first
    tiles: dict = field(default_factory=dict)   # per class of positions, the tile its sample proves (final_values)

    def offsets(self, points: np.ndarray) -> np.ndarray:
        return self.base[1] + (points - np.asarray(self.base[0])) @ np.asarray(self.steps, dtype=np.int64)

    def log(self, store_log: list) -> list:
        """`store_log` with the stores outside this allocation left out (one entry per entry, aligned with its
        owners)."""
        lo, hi = self.span[0] * SECTOR, self.span[1] * SECTOR
        return [(a[(a >= lo) & (a < hi)], size) for a, size in store_log]


@dataclass
class Producer:
    """An earlier sampled launch whose unrun programs may store what a later launch reads."""
    name: str
    fn: Any
    args: dict
    grid: tuple
    run: set
    parts: list                 # a Tiling per allocation its run programs stored into (empty: no tiling, see untiled)
    spans: list                 # sector intervals of the allocations its programs stored into
    accesses: int = 0           # the most memory instructions one run program executed
    heaviest: dict = field(default_factory=dict)   # the most bytes and FLOPs (per key) one run program moved or did
    written: np.ndarray = field(default_factory=lambda: _EMPTY)   # sectors its run programs wrote
    atomic: bool = False        # its programs add atomically (split-K partial sums)
    since: int = 0              # the ledger's history length after its launch: what later launches wrote follows
    untiled: str = ""           # why parts is empty, naming the construct (ClosureLimit's message)
    overwritten: str = ""       # the aten op that wrote into its allocations after it: its programs can no longer run
    idle: tuple | None = None   # (axis, first idle coordinate) of the idle part its sample proved (sample_trust.idle_tail)
    order: int = 0              # its launch's place among the sampled launches (final_values: what it stores over)


def producer(name: str, fn: Any, args: dict, grid: tuple, chosen: list, launch: TritonLaunch,
             spans: list) -> Producer | None:
    """The Producer of a sampled launch that left programs unrun and stored something (None otherwise)."""
    if len(chosen) >= math.prod(grid) or not launch.store_log:
        return None
    owners = np.asarray(launch.store_program, dtype=np.int64)
    written = launch.writes if launch.writes is not None else _EMPTY
    touched = [(a, b) for a, b in spans if np.searchsorted(written, a) < np.searchsorted(written, b)]
    parts = [_tiling(grid, chosen, launch.store_log, owners, span) for span in touched]
    placed = sum(int(a.size) for part in parts if part is not None for a, _ in part.log(launch.store_log))
    if not parts or None in parts or placed != sum(int(a.size) for a, _ in launch.store_log):
        parts, untiled = [], AFFINE   # an allocation no map holds, or a store into none of its allocations
    elif _overlapping(launch.store_log, owners, launch.store_atomic, list(range(len(chosen)))):
        parts, untiled = [], OVERLAP   # tiles of a tiling do not overlap (red team a260)
    else:
        untiled = ""
    return Producer(name, fn, args, grid, {p for p, _ in chosen}, parts, touched, written=written, untiled=untiled,
                    accesses=int(launch.program_accesses_max), heaviest=heaviest(launch), atomic=bool(launch.atomics()))


def _tiling(grid: tuple, chosen: list, store_log: list, owners: np.ndarray, span: tuple) -> Tiling | None:
    """The Tiling of the run programs' stores into the allocation `span`, or None where they follow no affine map or
    one stored outside the widest one's stores moved to it (red team a256)."""
    part = Tiling(span, ((0, 0, 0), 0), (0, 0, 0), _EMPTY)
    log = part.log(store_log)
    firsts = np.full(len(chosen), np.iinfo(np.int64).max)
    for (addrs, _), k in zip(log, owners):
        if 0 <= k < len(chosen) and addrs.size:
            firsts[k] = min(firsts[k], int(addrs.min()))
    stored = [k for k in range(len(chosen)) if firsts[k] != np.iinfo(np.int64).max]
    pos = [np.asarray(chosen[k][0], dtype=np.int64) for k in stored]
    steps = _steps(grid, pos, [int(firsts[k]) for k in stored])
    if steps is None:
        return None
    sizes = np.bincount(owners[owners >= 0], weights=[a.size for (a, _), k in zip(log, owners) if k >= 0],
                        minlength=len(chosen))
    widest = max(stored, key=lambda k: (sizes[k], -k))
    part.base, part.steps = (tuple(chosen[widest][0]), int(firsts[widest])), steps
    part.segments = runs_of(*stores_of(log, owners, widest)) - int(firsts[widest])
    if not all(inside(part.segments, *stores_of(log, owners, k), int(part.offsets(p))) for k, p in zip(stored, pos)):
        return None
    return part


def _overlapping(store_log: list, owners: np.ndarray, atomic: list[bool], stored: list[int]) -> bool:
    """Whether a byte one run program stored with a plain store is stored by another run program, with a plain
    store or an atomic. The tiles of a tiling do not overlap (a split-K's atomic adds do, by design, in any launch:
    atomic on atomic is not looked at): a launch whose every program rewrites a shared slot list, a constant header
    first (every program's first byte the same: a step of 0), passed for a tiling, and the closure ran the unrun
    programs after the sampled ones, which had taken the first slots for a later launch to redo their rows alone
    (red team a260; a261: with one atomic beside it; a265: one program's atomic add of 0 over the whole list made
    it the widest, inside whose stores every slot lay)."""
    per: dict[tuple[int, bool], list] = {}   # one pass over the log (it holds every store of every run program)
    wanted = set(stored)
    for (addrs, size), k, added in zip(store_log, owners, atomic):
        if addrs.size and int(k) in wanted:
            per.setdefault((int(k), bool(added)), []).append((addrs, size))
    if not any(not added for _, added in per):
        return False
    runs = sorted((int(a), int(b), k, added) for (k, added), mine in per.items()
                  for a, b in runs_of(np.concatenate([a for a, _ in mine]).astype(np.int64),
                                        np.concatenate([np.full(a.size, z, dtype=np.int64) for a, z in mine])))
    # sweep by start: a run overlaps an earlier one when it starts before that one's end. For each kind (plain,
    # atomic), the two furthest ends reached so far by runs of two different programs: one of them is another
    # program's whichever program asks
    reach = {False: [(-1, -1), (-1, -1)], True: [(-1, -1), (-1, -1)]}   # kind -> [(end, program), (end, program)]
    for start, stop, k, added in runs:
        kinds = (False,) if added else (False, True)   # an atomic is looked at against plain stores only
        for kind in kinds:
            (e1, k1), (e2, _) = reach[kind]
            if (e1 if k1 != k else e2) > start:
                return True
        top = reach[added]
        if k == top[0][1]:
            top[0] = (max(top[0][0], stop), k)
        elif stop > top[0][0]:
            top[0], top[1] = (stop, k), top[0]
        elif stop > top[1][0]:
            top[1] = (stop, k)
    return False


def heaviest(launch: TritonLaunch) -> dict:
    """The most one program of the launch executed, moved and computed (memory instructions, bytes, FLOPs per key)."""
    return {"accesses": int(launch.program_accesses_max), "bytes": float(launch.program_bytes_max),
            **{f"flops:{k}": float(v) for k, v in launch.program_flops_max.items()}}


def _steps(grid: tuple, pos: list[np.ndarray], firsts: list[int]) -> tuple | None:
    """Bytes per step on each axis of an affine map from a program's position to the first byte it stores, from
    run programs that differ on one axis only, if every run program that stored follows it (else None)."""
    if not pos:
        return None
    steps = []
    for a in range(3):
        if grid[a] == 1:
            steps.append(0)
            continue
        pairs = [(i, j) for i in range(len(pos)) for j in range(len(pos))
                 if pos[j][a] > pos[i][a] and all(pos[i][b] == pos[j][b] for b in range(3) if b != a)]
        if not pairs:
            return None
        i, j = max(pairs, key=lambda ij: pos[ij[1]][a] - pos[ij[0]][a])
        delta, span = firsts[j] - firsts[i], int(pos[j][a] - pos[i][a])
        if delta % span:
            return None
        steps.append(delta // span)
    step = np.asarray(steps, dtype=np.int64)
    if any(f != firsts[0] + int((p - pos[0]) @ step) for p, f in zip(pos, firsts)):
        return None
    return tuple(steps)
