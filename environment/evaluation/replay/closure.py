"""Dependency closure of the sampled GPU-shape replay: run the producer programs a sampled consumer reads from.

The sampled replay (sampled.py) runs a sample of each launch's programs. Launches that feed each other over
different tilings (fc1 over (M, HID) tiles feeding fc2 over (M, D) tiles, row statistics feeding a 2-D tile grid,
a split-K reduction feeding an epilogue over rows) then read elements no sampled program of the earlier launch
wrote. Before a launch's sampled programs run (and before each probe the sampler adds: line_grid.sample_line),
this module:

1. probes them: runs them once with every store and atomic undone afterwards (an undo log kept by the counting
   hooks, modeled/triton_hooks.py), on a throw-away launch record, to learn which sectors they read;
2. for each earlier sampled launch (latest first) whose unrun programs may have written those sectors, predicts
   which of its programs store there, where its programs are a tiling of every allocation they store into
   (producer.py: the widest run program's stores there, moved along an affine map of the grid position; a
   superset at masked edges); the chosen producer programs are probed in turn (a chain of launches), latest
   first;
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

import numpy as np

from environment.evaluation.modeled.memory import SECTOR, intervals_of, overlap
from environment.evaluation.modeled.triton_launch import TritonLaunch
from environment.evaluation.replay.producer import Producer, heaviest
from environment.evaluation.replay.sample_trust import OUTLIER_SLACK
from environment.evaluation.replay.tile_stores import idle_writer, outside_tiles

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


def _heavier(ran: dict, sampled: dict) -> str:
    """What the closure's programs did past the most any sampled program of their launch did ("" when nothing)."""
    def past(key: str, value: float) -> bool:
        rel, absolute = BYTES_SLACK if key == "bytes" else OUTLIER_SLACK
        return value > sampled.get(key, 0.0) * rel + absolute
    return next((f"{k} {v:g}, sampled programs at most {sampled.get(k, 0.0):g}" for k, v in ran.items()
                 if past(k, v)), "")


def missing(p: Producer, reads: np.ndarray) -> np.ndarray:
    """Sectors read that lie in an allocation p stored into (which of them unrun programs of p write is
    predict's to say: a sector holds several elements, so one a run program wrote may hold others it did not)."""
    inside = [reads[np.searchsorted(reads, a):np.searchsorted(reads, b)] for a, b in p.spans]
    return np.concatenate(inside) if inside else _EMPTY


def predict(p: Producer, need: np.ndarray, parts: list | None = None) -> list[tuple[int, int, int]]:
    """Unrun programs of p whose stores in one of its allocations (`parts`: those of p.parts looked at, all by
    default), the widest run program's moved along that allocation's map, touch a needed sector, in grid order; none
    without a tiling to follow (_bound names a read of such a producer the model's limit before any prediction)."""
    if not need.size or not p.parts:
        return []
    gx, gy, gz = p.grid
    points = np.stack(np.meshgrid(np.arange(gx), np.arange(gy), np.arange(gz), indexing="ij"), -1).reshape(-1, 3)
    out: set[tuple[int, int, int]] = set()
    for part in p.parts if parts is None else parts:
        offs = part.offsets(points)
        lo, hi = int(part.segments[:, 0].min()), int(part.segments[:, 1].max())
        count = (np.searchsorted(need, (offs + hi - 1) // SECTOR, side="right") -
                 np.searchsorted(need, (offs + lo) // SECTOR))
        for k in np.flatnonzero(count > 0):
            o = int(offs[k])
            first = np.searchsorted(need, (part.segments[:, 0] + o) // SECTOR)
            end = np.searchsorted(need, (part.segments[:, 1] + o - 1) // SECTOR, side="right")
            q = tuple(int(c) for c in points[k])
            if (end > first).any() and q not in p.run:
                out.add(q)
    return sorted(out)


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
    if not p.parts:   # what unrun programs store there is unknown, also in sectors run programs wrote: a later
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
        heavier = _heavier(heaviest(done), p.heaviest)
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
            if q.spans and missing(q, ran).size and (not q.parts or predict(q, missing(q, ran))):
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
