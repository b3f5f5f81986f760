"""Byte accounting at 32-byte sector granularity, and where each output byte came from.

A GPU moves global memory in 32-byte sectors, so traffic is counted in sectors touched.
The ledger follows host-produced data: memory allocated during the call (`torch.empty`) or lifted
from the host (`torch.tensor`, `torch.from_numpy`) is *dirty* until a counted launch writes it;
a launch that reads more than a few dirty bytes writes dirty bytes itself. An output byte has
provenance when a clean counted launch wrote it. This catches outputs computed on the host with
numpy (written through `.numpy()` views or lifted and then copied by a counted op) and outputs
memoized from an earlier call.
"""
from __future__ import annotations

import numpy as np
import torch

SECTOR = 32
# Small host constants (torch.tensor(0.5), a lookup table of a few values) are legitimate inputs
# to a kernel; a launch is tainted only when it reads more dirty bytes than this.
DIRTY_READ_ALLOWANCE = 1024

_EMPTY = np.zeros(0, dtype=np.int64)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique for int64 arrays, faster for the mostly ascending arrays counting produces."""
    if values.size == 0:
        return _EMPTY
    step = np.diff(values)
    if not (step >= 0).all():
        values = np.sort(values)
        step = np.diff(values)
    return values[np.concatenate(([True], step != 0))]


def element_sectors(addrs: np.ndarray, itemsize: int) -> np.ndarray:
    """Unique sectors touched by elements at `addrs` (byte addresses) of `itemsize` bytes."""
    if addrs.size == 0:
        return _EMPTY
    first = addrs.astype(np.int64) // SECTOR
    last = (addrs.astype(np.int64) + itemsize - 1) // SECTOR
    return sorted_unique(first if np.array_equal(first, last) else np.concatenate([first, last]))


def tensor_span(t: torch.Tensor) -> tuple[int, int, int]:
    """(first byte, end byte, unique bytes) a strided tensor touches; broadcast dims count once."""
    if t.numel() == 0:
        return 0, 0, 0
    item = t.element_size()
    low = sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if st < 0)
    high = sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if st > 0)
    start = t.data_ptr() + low * item
    unique = item
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            unique *= size
    return start, t.data_ptr() + (high + 1) * item, min(unique, (high - low + 1) * item)


# --- sets of sectors as sorted disjoint intervals [start, end) --------------------------------------
# At the sizes a GPU runs a tensor spans millions of sectors: an array of them per tensor (and the
# concatenations and sorts of a ledger over them) would need hundreds of MiB. A tensor is one interval.
Intervals = tuple  # (starts, ends): int64 arrays, sorted, disjoint, non-adjacent


def no_sectors() -> Intervals:
    return _EMPTY, _EMPTY


def tensor_interval(t: torch.Tensor) -> Intervals:
    start, end, _ = tensor_span(t)
    if end <= start:
        return no_sectors()
    return np.array([start // SECTOR], dtype=np.int64), np.array([(end - 1) // SECTOR + 1], dtype=np.int64)


def intervals_of(sectors: np.ndarray) -> Intervals:
    """The runs of a sorted unique sector array."""
    if sectors.size == 0:
        return no_sectors()
    breaks = np.flatnonzero(np.diff(sectors) != 1) + 1
    return sectors[np.concatenate(([0], breaks))], sectors[np.concatenate((breaks - 1, [sectors.size - 1]))] + 1


def _combine(a: Intervals, b: Intervals, keep) -> Intervals:
    """The sectors whose membership (in a, in b) satisfies keep(in_a, in_b), as intervals."""
    points = np.unique(np.concatenate([a[0], a[1], b[0], b[1]]))
    if points.size < 2:
        return no_sectors()
    lo = points[:-1]

    def member(s: Intervals) -> np.ndarray:
        if s[0].size == 0:
            return np.zeros(lo.size, dtype=bool)
        i = np.searchsorted(s[0], lo, side="right") - 1
        return (i >= 0) & (lo < np.where(i >= 0, s[1][np.maximum(i, 0)], 0))

    take = keep(member(a), member(b))
    starts, ends = lo[take], points[1:][take]
    if starts.size == 0:
        return no_sectors()
    joined = np.flatnonzero(starts[1:] != ends[:-1]) + 1  # merge segments that touch
    return starts[np.concatenate(([0], joined))], ends[np.concatenate((joined - 1, [ends.size - 1]))]


def union(a: Intervals, b: Intervals) -> Intervals:
    return _combine(a, b, lambda x, y: x | y)


def minus(a: Intervals, b: Intervals) -> Intervals:
    return _combine(a, b, lambda x, y: x & ~y)


def one_interval(start: int, end: int) -> Intervals:
    """The sector interval [start, end) as Intervals."""
    return np.array([start], dtype=np.int64), np.array([end], dtype=np.int64)


def overlap(a: Intervals, b: Intervals) -> int:
    """Sectors in both."""
    return size(_combine(a, b, lambda x, y: x & y))


def size(a: Intervals) -> int:
    return int((a[1] - a[0]).sum())


class ProvenanceLedger:
    """Dirty and clean-written sectors of one counted call (as intervals)."""

    def __init__(self) -> None:
        self.dirty = no_sectors()
        self.clean = no_sectors()
        self.tainted_launches: list[str] = []
        self.history: list[Intervals] = []   # what each launch and host write of the call wrote, in call order
        self.late: list[tuple[int, Intervals]] = []   # what programs of a launch run late wrote, at its place

    def written_since(self, mark: int) -> Intervals:
        """The sectors written after the first `mark` entries of the history (a launch's len(history) after it),
        with what programs of a launch after them wrote when run late (the dependency closure)."""
        out = no_sectors()
        for writes in self.history[mark:] + [w for at, w in self.late if at > mark]:
            out = union(out, writes)
        return out

    def host_data(self, sectors: Intervals, logged: bool = True) -> None:
        """Memory whose contents did not come from a counted launch (allocation, host lift)."""
        if logged:
            self.history.append(sectors)
        self.dirty = union(self.dirty, sectors)
        self.clean = minus(self.clean, sectors)

    def launch(self, name: str, reads: Intervals, writes: Intervals, replayed: int | None = None) -> int:
        """Record a counted launch; returns the dirty bytes it read. `replayed`: programs of an earlier launch run
        late (the sampled replay's dependency closure), kept out of the history's call order but at their launch's
        place in it (its len(history) after it): a launch before that one had read the memory they write."""
        if replayed is None:
            self.history.append(writes)
        else:
            self.late.append((replayed, writes))
        dirty_read = overlap(reads, self.dirty) * SECTOR
        if dirty_read > DIRTY_READ_ALLOWANCE:
            self.tainted_launches.append(name)
            self.host_data(writes, logged=False)
        else:
            self.dirty = minus(self.dirty, writes)
            self.clean = union(self.clean, writes)
        return dirty_read

    def covered(self, t: torch.Tensor) -> tuple[int, int]:
        """(sectors of `t` written by clean counted launches, sectors of `t`)."""
        sectors = tensor_interval(t)
        return overlap(sectors, self.clean), size(sectors)
