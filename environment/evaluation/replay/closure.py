"""Dependency closure of the sampled GPU-shape replay: run the producer programs a sampled consumer reads from.

The sampled replay (sampled.py) runs a sample of each launch's programs. Launches that feed each other over
different tilings (fc1 over (M, HID) tiles feeding fc2 over (M, D) tiles, row statistics feeding a 2-D tile grid,
a split-K reduction feeding an epilogue over rows) then read elements no sampled program of the earlier launch
wrote. Before a launch's sampled programs run (and before each probe the sampler adds: line_grid.sample_line),
this module:

1. probes them: runs them once with every store and atomic undone afterwards (an undo log kept by the counting
   hooks, modeled/triton_hooks.py), on a throw-away launch record, to learn which sectors they read;
2. for each earlier sampled launch (latest first) whose unrun programs may have written those sectors, predicts
   which of its programs store there: a launch's programs are a tiling when the first byte each run program
   stores is an affine function of its grid position and every run program's stores lie within the widest run
   program's stores moved by that function (both checked on every run program), and program q's stores are
   then predicted as those (a superset at masked edges); the chosen
   producer programs are probed in turn (a chain of launches), latest first;
3. runs the chosen producer programs for real, earliest launch first, before the consumer's sampled programs.

The programs it runs carry no weight: they are not in any launch's counts, estimate or coverage (the price of
every launch stays what its own secret-drawn sample says, so no kernel gains by doing work only where the
closure runs), and what they store is compared with the reference where it is an output, like any executed
work. The provenance ledger sees their reads and writes as a launch of the producer: data a closure program
reads that no counted work wrote still taints. A closure program that executes, moves or computes more than every
sampled program of its launch did (a program that works only when a later launch has set a flag, red team a200 and
a202) is no program the sample prices: the replay fails (ClosureOutlier, no speed credit), not the model's limit. A closure wider than PROGRAM_ACCESSES per sampled program, a producer
whose programs are no tiling the prediction can follow, or a consumer writing over what its producer stores (in
place over atomic sums: the sums it does not overwrite are no final values, and stored output elements are compared)
runs nothing and is reported as the model's limit.
Producer programs run late read memory as it is then: ones that read what a later step of the call overwrote (a
workspace reused once the producer had read it, red team a221) would compute something else than on a GPU, so they
are the model's limit too (the ledger's history says what each step wrote), never a wrong result of the kernel's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from environment.evaluation.modeled.memory import SECTOR, intervals_of, overlap
from environment.evaluation.modeled.triton_launch import TritonLaunch
from environment.evaluation.replay.sample_trust import OUTLIER_SLACK
from environment.evaluation.replay.tile_stores import idle_writer, inside, outside_tiles, segments_of, stores_of

# The most memory instructions the producer programs one sampled consumer program reads from may execute (their
# count times the most one run program of the producer executed): what one sampled program may execute itself
# (sampled.PROGRAM_ACCESSES), so the closure at most doubles the replay's worst case, and the same for every program
# of a tiling, so the verdict does not depend on the draw. Measured (bench/closure_cost.py, one BLAS thread as the
# harness's children run, this 2-core host under load): an fc2 tile of a 4096 x 1024 x 4096 MLP reads a whole row of
# fc1 tiles, 32 programs of 66 instructions (128 x 128 x 32 tiles: 2112) or 64 of 34 (64 x 64 x 64: 2176); the
# sample's closure ran 392 programs (26k instructions) in 27 s, and 841 (29k, heavier index arithmetic) in 47 s
PROGRAM_ACCESSES = 4096
# The most programs of a producer's grid the prediction looks at (an elementwise grid at 8192^2 in blocks of 256)
PREDICT_GRID = 1 << 20
_EMPTY = np.zeros(0, dtype=np.int64)
# A closure program may move this much more than the heaviest sampled program of its launch (rows unaligned to a
# sector touch one more sector each, and the closure's programs are not the sample's); memory instructions and FLOPs,
# the same for every program of a tiling, get the sample's own OUTLIER_SLACK
BYTES_SLACK = (1.25, 4 * SECTOR)
LIMIT = "the sampled replay's dependency closure"   # names the construct in the limit's message (evaluator/gpu_shape.py)
# Why a producer is no tiling the closure can follow (ClosureLimit's message, {p}: the producer)
AFFINE = "where a program of {p} stores is no affine function of its grid position (a tiling it can follow)"
OVERLAP = ("two programs of {p} store the same bytes, one with a plain store (a tiling's tiles do not overlap: a slot "
           "list or flag every program writes is no tiling it can follow)")


@dataclass
class Producer:
    """An earlier sampled launch whose unrun programs may store what a later launch reads."""
    name: str
    fn: Any
    args: dict
    grid: tuple
    run: set
    base: tuple                 # a run program's position and the first byte it stored: (position, byte)
    steps: tuple | None         # bytes the first stored byte moves per step on each axis (None: no tiling)
    segments: np.ndarray        # the widest run program's stores as [start, end) byte runs relative to its first
    spans: list                 # sector intervals of the allocations its programs stored into
    accesses: int = 0           # the most memory instructions one run program executed
    heaviest: dict = field(default_factory=dict)   # the most bytes and FLOPs (per key) one run program moved or did
    written: np.ndarray = field(default_factory=lambda: _EMPTY)   # sectors its run programs wrote
    atomic: bool = False        # its programs add atomically (split-K partial sums)
    since: int = 0              # the ledger's history length after its launch: what later launches wrote follows
    untiled: str = ""           # why steps is None, naming the construct (ClosureLimit's message)
    overwritten: str = ""       # the aten op that wrote into its allocations after it: its programs can no longer run
    idle: tuple | None = None   # (axis, first idle coordinate) of the idle part its sample proved (sample_trust.idle_tail)
    order: int = 0              # its launch's place among the sampled launches (final_values: what it stores over)
    tiles: dict = field(default_factory=dict)   # per class of positions, the tile its sample proves (final_values)

    def offsets(self, points: np.ndarray) -> np.ndarray:
        return self.base[1] + (points - np.asarray(self.base[0])) @ np.asarray(self.steps, dtype=np.int64)


def producer(name: str, fn: Any, args: dict, grid: tuple, chosen: list, launch: TritonLaunch,
             spans: list) -> Producer | None:
    """The Producer of a sampled launch that left programs unrun and stored something (None otherwise)."""
    if len(chosen) >= math.prod(grid) or not launch.store_log:
        return None
    owners = np.asarray(launch.store_program, dtype=np.int64)
    firsts = np.full(len(chosen), np.iinfo(np.int64).max)
    for (addrs, _), k in zip(launch.store_log, owners):
        if 0 <= k < len(chosen) and addrs.size:
            firsts[k] = min(firsts[k], int(addrs.min()))
    stored = [k for k in range(len(chosen)) if firsts[k] != np.iinfo(np.int64).max]
    written = launch.writes if launch.writes is not None else _EMPTY
    touched = [(a, b) for a, b in spans if np.searchsorted(written, a) < np.searchsorted(written, b)]
    pos = [np.asarray(chosen[k][0], dtype=np.int64) for k in stored]
    steps = _steps(grid, pos, [int(firsts[k]) for k in stored])
    sizes = np.bincount(owners[owners >= 0], weights=[a.size for (a, _), k in zip(launch.store_log, owners) if k >= 0],
                        minlength=len(chosen))
    widest = max(stored, key=lambda k: (sizes[k], -k))
    addrs, items = stores_of(launch.store_log, owners, widest)
    segments = segments_of(addrs - int(firsts[widest]), items)
    if steps is not None and not all(inside(segments, *stores_of(launch.store_log, owners, k),
                                            int(firsts[widest]) + int((pos[i] - pos[stored.index(widest)]) @ steps))
                                     for i, k in enumerate(stored)):
        steps = None   # a run program stored outside the widest one's stores moved to it: no tiling (red team a256)
    untiled = "" if steps is not None else AFFINE
    if steps is not None and _overlapping(launch.store_log, owners, launch.store_atomic, stored):
        steps, untiled = None, OVERLAP   # tiles of a tiling do not overlap (red team a260)
    return Producer(name, fn, args, grid, {p for p, _ in chosen}, (tuple(chosen[widest][0]), int(firsts[widest])),
                    steps, segments, touched, written=written, untiled=untiled,
                    accesses=int(launch.program_accesses_max), heaviest=_heaviest(launch), atomic=bool(launch.atomics()))


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
                  for a, b in segments_of(np.concatenate([a for a, _ in mine]).astype(np.int64),
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


def _heaviest(launch: TritonLaunch) -> dict:
    """The most one program of the launch executed, moved and computed (memory instructions, bytes, FLOPs per key)."""
    return {"accesses": int(launch.program_accesses_max), "bytes": float(launch.program_bytes_max),
            **{f"flops:{k}": float(v) for k, v in launch.program_flops_max.items()}}


def _heavier(ran: dict, sampled: dict) -> str:
    """What the closure's programs did past the most any sampled program of their launch did ("" when nothing)."""
    def past(key: str, value: float) -> bool:
        rel, absolute = BYTES_SLACK if key == "bytes" else OUTLIER_SLACK
        return value > sampled.get(key, 0.0) * rel + absolute
    return next((f"{k} {v:g}, sampled programs at most {sampled.get(k, 0.0):g}" for k, v in ran.items()
                 if past(k, v)), "")


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


def missing(p: Producer, reads: np.ndarray) -> np.ndarray:
    """Sectors read that lie in an allocation p stored into (which of them unrun programs of p write is
    predict's to say: a sector holds several elements, so one a run program wrote may hold others it did not)."""
    inside = [reads[np.searchsorted(reads, a):np.searchsorted(reads, b)] for a, b in p.spans]
    return np.concatenate(inside) if inside else _EMPTY


def predict(p: Producer, need: np.ndarray) -> list[tuple[int, int, int]]:
    """Unrun programs of p whose stores (the widest run program's, moved along p.steps) touch a needed sector; none
    without a tiling to follow (_bound names a read of such a producer the model's limit before any prediction)."""
    if not need.size or p.steps is None:
        return []
    gx, gy, gz = p.grid
    points = np.stack(np.meshgrid(np.arange(gx), np.arange(gy), np.arange(gz), indexing="ij"), -1).reshape(-1, 3)
    offs = p.offsets(points)
    lo, hi = int(p.segments[:, 0].min()), int(p.segments[:, 1].max())
    count = np.searchsorted(need, (offs + hi - 1) // SECTOR, side="right") - np.searchsorted(need, (offs + lo) // SECTOR)
    out = []
    for k in np.flatnonzero(count > 0):
        o = int(offs[k])
        first = np.searchsorted(need, (p.segments[:, 0] + o) // SECTOR)
        end = np.searchsorted(need, (p.segments[:, 1] + o - 1) // SECTOR, side="right")
        q = tuple(int(c) for c in points[k])
        if (end > first).any() and q not in p.run:
            out.append(q)
    return out


class ClosureLimit(Exception):
    """The closure cannot be run within the model's bounds (the message names the construct)."""


class ClosureOutlier(Exception):
    """Producer programs the closure ran did work no sampled program of their launch did: the launch's price (its
    sample's) does not stand for them, and they weigh nothing (a kernel's fault, not the model's limit)."""


def run_programs(sink, fn, args: dict, grid: tuple, programs: list, name: str, undo: bool) -> TritonLaunch:
    """Run programs of a launch on a throw-away launch record (`undo`: every store and atomic reverted after)."""
    import triton.runtime.interpreter as interp
    real = sink.launch
    scratch = TritonLaunch(name, real.signature if real is not None else {}, addresses=False)
    scratch.access_budget = real.access_budget if real is not None else 0
    scratch.undo = [] if undo else None
    sink.launch = scratch
    scope = interp._patch_lang(fn)
    interp.interpreter_builder.set_grid_dim(*grid)
    try:
        for x, y, z in programs:
            interp.interpreter_builder.set_grid_idx(x, y, z)
            fn(**args)
    finally:
        scope.restore()
        sink.launch = real
        for ptrs, old, mask in reversed(scratch.undo or []):
            interp._interpreter._native.store(ptrs, old, mask)
    scratch._close_program()
    return scratch


def _bound(p: Producer, wanted: np.ndarray, name: str, writes: np.ndarray = _EMPTY) -> None:
    """Raise ClosureLimit when the producer programs one consumer program needs (`wanted`: the sectors of p's
    allocations it reads; `writes`: the sectors it writes) cannot be predicted, are past the bound, or add partial
    sums atomically into an allocation the consumer then writes over (an in-place epilogue over split-K sums: the
    sums the producer programs leave where no sampled consumer program writes are no final values, and the check
    compares every stored element with the reference's output)."""
    if not wanted.size:
        return
    if p.atomic and missing(p, writes).size:
        raise ClosureLimit(f"{name} writes over the sums programs of {p.name} add atomically, and reads what unsampled "
                           "ones add (an in-place epilogue over split-K sums: the replay can compare only final values)")
    if p.steps is None:   # what unrun programs store there is unknown, also in sectors run programs wrote: a later
        # launch could read what only the sampled programs wrote (a slot list they filled) and redo their rows alone
        raise ClosureLimit(f"{name} reads what {p.name} writes, and {p.untiled.format(p=p.name)}")
    if p.overwritten and predict(p, wanted):
        raise ClosureLimit(_overwritten(p, name))
    if math.prod(p.grid) > PREDICT_GRID:
        raise ClosureLimit(f"{name} reads what unsampled programs of {p.name} write, on a grid of "
                           f"{math.prod(p.grid)} programs (the closure follows at most {PREDICT_GRID})")
    work = len(predict(p, wanted)) * max(p.accesses, 1)
    if work > PROGRAM_ACCESSES:
        raise ClosureLimit(f"a program of {name} reads what {work // max(p.accesses, 1)} programs of {p.name} "
                           f"write ({work} memory instructions, past the {PROGRAM_ACCESSES} the producers of "
                           "one sampled program may run)")


def _overwritten(p: Producer, name: str) -> str:
    return (f"{name} reads what unsampled programs of {p.name} write, and {p.overwritten} wrote into the same "
            f"allocation after {p.name}: run now, those programs would overwrite it")


def close(sink, fn, args: dict, grid: tuple, chosen: list, name: str, spans: list) -> None:
    """Run, before the sampled `chosen` programs of launch `name` (handed the allocations `spans`), the programs of
    earlier sampled launches that store what they read (see the module docstring). Raises ClosureLimit past the
    bounds. A launch handed no allocation an earlier sampled launch stored into is not probed."""
    producers = [p for p in sink.producers if p.spans]
    if not any(a < d and c < b for p in producers for a, b in p.spans for c, d in spans):
        return
    # each sampled program probed alone, and judged as soon as it is: what one program needs bounds the closure
    # whichever programs the seed drew, and a launch past the bound costs one probed program, not the sample
    reads = []
    for pos, _ in chosen:
        probe = run_programs(sink, fn, args, grid, [pos], name, undo=True)
        own, written = probe._unique("read"), probe._unique("write")
        for p in producers:
            _bound(p, missing(p, own), name, written)
        reads.append(own)
    need, plan = np.unique(np.concatenate(reads)) if reads else _EMPTY, []
    for p in reversed(producers):
        programs = predict(p, missing(p, need))
        if programs and any(q.spans for q in producers[:producers.index(p)]):   # a chain: what do they read?
            feeds = run_programs(sink, p.fn, p.args, p.grid, programs, p.name, undo=True)
            need = np.union1d(need, feeds._unique("read"))
        if programs and p.overwritten:
            raise ClosureLimit(_overwritten(p, name))
        if programs:
            plan.append((p, programs))
        work = sum(len(q) * max(r.accesses, 1) for r, q in plan)
        if work > PROGRAM_ACCESSES * len(chosen):
            raise ClosureLimit(f"the programs {name} samples read, through a chain of launches, what programs of "
                               f"{work} memory instructions write (at most {PROGRAM_ACCESSES} per sampled program)")
    for p, programs in reversed(plan):   # earliest launch first
        done = run_programs(sink, p.fn, p.args, p.grid, programs, p.name, undo=False)
        heavier = _heavier(_heaviest(done), p.heaviest)
        if heavier:   # e.g. a flag a later launch sets, read to work only where the closure runs (red team a200)
            raise ClosureOutlier(f"programs of {p.name} the closure ran for {name} did more than its sampled "
                                 f"programs ({heavier}): the sample's price does not stand for them")
        idle = idle_writer(p, done, programs)
        if idle is not None:   # rare programs past the busy part doing the tiles, priced as idle (red team a273)
            raise ClosureOutlier(f"program {idle} of {p.name} the closure ran for {name} lies in its launch's idle "
                                 "part (the sample proved those programs store nothing) and stored: the sample's "
                                 "price does not stand for it")
        stray = outside_tiles(p, done, programs)
        if stray is not None:   # a mark into another buffer a later launch reads (red team a271)
            raise ClosureLimit(f"program {stray} of {p.name} the closure ran for {name} stores outside the tile its "
                               "launch's sampled programs predict")
        ran = done._unique("read")
        # run for real, after the earlier producers' planned programs, they may read what their probes did not (a
        # relay reading flags only where a gate's closure programs set it: red team a270)
        for q in producers[:producers.index(p)]:
            if q.spans and missing(q, ran).size and (q.steps is None or predict(q, missing(q, ran))):
                raise ClosureLimit(f"programs of {p.name} the closure ran for {name} read what unsampled programs "
                                   f"of {q.name} write (a read that depends on what the closure's programs of another "
                                   "launch stored)")
        reads = intervals_of(ran)
        # e.g. a workspace reused once p had read it (a221), or what the closure ran of a later launch stored (a272)
        if overlap(reads, sink.ledger.written_since(p.since)):
            raise ClosureLimit(f"programs of {p.name} the closure ran for {name} read memory a later step of the call "
                               f"overwrote (on a GPU {p.name} read it before): they cannot be run this late")
        sink.stores.extend(done.store_log)
        sink.store_order.extend([p.order] * len(done.store_log))   # stored as p's, at p's place in the call
        writes = done._unique("write")
        sink.ledger.launch(p.name, reads, intervals_of(writes), replayed=p.since)
        p.run.update(programs)
    import triton.runtime.interpreter as interp
    interp.interpreter_builder.set_grid_dim(*grid)
