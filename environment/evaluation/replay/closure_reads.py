"""Reads the dependency closure (closure.py) runs no producer programs for, checked against what unsampled programs
of earlier sampled launches write: an aten op's (aten_bound, the sampled CostCounter's aten_reads hook) and a launch's
programs run together rather than probed one by one (after). Either is the model's limit where they read there."""
from __future__ import annotations

import math

import numpy as np

from environment.evaluation.modeled.memory import one_interval, overlap
from environment.evaluation.replay.closure import PREDICT_GRID, ClosureLimit, missing, predict

_EMPTY = np.zeros(0, dtype=np.int64)


def aten_bound(producers: list, name: str, reads) -> None:
    """Raise ClosureLimit when aten op `name` reads (sector intervals `reads`) an allocation a sampled producer with
    no tiling to follow stored into: what its unrun programs store there is unknown, also in sectors its run
    programs wrote, as for a launch reading it (_bound). The closure never runs producer programs for an aten op; a
    slot list only the sampled programs filled, read by `lst - 1` for a later launch to redo their rows alone, went
    unseen (red team a264). Nor for a tiling of plain stores: what its unrun programs would store there reads as
    whatever the allocation held (flags a `torch.zeros` buffer kept for every row but the sampled ones, doubled by
    an aten op for a whole later launch to redo the sampled rows alone: a266), so reading it is the model's limit
    too, and for atomic producers alike: flags set with an atomic (or beside one, or added along a split axis the
    sample completes) were read as partial sums (red team a267, a268), and a split-K's sums read by a PyTorch
    epilogue were compared as if final (an honest `torch.relu(out + bias)` was judged size-dependent)."""
    for p in producers:
        if not any(overlap(one_interval(a, b), reads) for a, b in p.spans):
            continue
        if not p.parts:
            raise ClosureLimit(f"{name} reads what {p.name} writes, and {p.untiled.format(p=p.name)}")
        if math.prod(p.grid) > PREDICT_GRID or predict(p, _sectors(reads, p.spans)):
            raise ClosureLimit(f"{name} reads what unsampled programs of {p.name} write (the closure runs producer "
                               "programs for a launch only, never for a PyTorch op)")


def after(sink, name: str) -> None:
    """Raise ClosureLimit when the programs launch `name` ran (its sample and every program added to it) read, run
    together, what unsampled programs of an earlier launch write. The closure ran the producer programs the sampled
    programs read when each was probed alone; a program that reads there only once another program of its launch
    has set a go bit read nothing there when probed, and read, run, what only the producers' sampled programs
    had written (red team a269)."""
    reads = sink.launch.read_so_far()
    for p in sink.producers:
        need = missing(p, reads) if p.spans else _EMPTY
        if not need.size:
            continue
        if not p.parts:
            raise ClosureLimit(f"{name} reads what {p.name} writes, and {p.untiled.format(p=p.name)}")
        if math.prod(p.grid) > PREDICT_GRID or predict(p, need):
            raise ClosureLimit(f"programs of {name} read, run together, what unsampled programs of {p.name} write, "
                               "and none did when each was probed alone (a read that depends on what another "
                               "program of the launch stored)")


def _sectors(reads, spans: list) -> np.ndarray:
    """The sectors (sorted) of the sector intervals `reads` (starts, ends) that lie in `spans`."""
    runs = [np.arange(max(int(a), c), min(int(b), d), dtype=np.int64)
            for c, d in spans for a, b in zip(*reads) if a < d and c < b]
    return np.unique(np.concatenate(runs)) if runs else _EMPTY
