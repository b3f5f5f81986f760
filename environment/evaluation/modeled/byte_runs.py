"""Bytes the finished programs of a launch stored, as [start, end) runs, and whether a load reads one of them.

A program that loads what another program of its launch stored (a flag, a counter, a partial sum) depends on the
order programs run in on a GPU, which the sampled replay does not reproduce: it runs its sample first
(replay/tickets.py). Bytes, not sectors: rows of an in-place row kernel share their boundary sectors with their
neighbours' (3001 floats per row), and a flag read one byte off its start is still read (red team a279)."""
from __future__ import annotations

import numpy as np

_RUNS = np.zeros((0, 2), dtype=np.int64)
_MERGE_PARTS = 32   # runs kept apart before they are merged into the sorted array (amortised merging)


def runs_of(addrs: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """[start, end) byte runs covering elements at `addrs` of `sizes` bytes, sorted, overlapping ones merged."""
    if not addrs.size:
        return _RUNS
    order = np.argsort(addrs, kind="stable")
    start, end = addrs[order], addrs[order] + sizes[order]
    reach = np.maximum.accumulate(end)
    new = np.ones(start.size, dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], start.size) - 1
    return np.stack([start[first], reach[last]], axis=1)


class StoredRuns:
    """The byte runs stored so far (merged lazily), with the span they cover: a load outside it, the common case
    (a kernel reading its inputs and storing its outputs), is settled without a search."""

    def __init__(self) -> None:
        self._merged, self._apart, self._span = _RUNS, [], (0, -1)

    def add(self, runs: np.ndarray) -> None:
        if not runs.size:
            return
        lo, hi = self._span
        first, last = int(runs[0, 0]), int(runs[-1, 1])
        self._span = (first, last) if hi < lo else (min(lo, first), max(hi, last))
        self._apart.append(runs)
        if len(self._apart) > _MERGE_PARTS or sum(len(r) for r in self._apart) > max(len(self._merged) // 4, 4096):
            both = np.concatenate([self._merged, *self._apart])
            self._merged = runs_of(both[:, 0], both[:, 1] - both[:, 0])
            self._apart = []

    def read(self, addrs: np.ndarray, itemsize: int) -> bool:
        """Whether any element at `addrs` (byte addresses) of `itemsize` bytes overlaps a stored byte."""
        lo, hi = self._span
        if hi < lo or not addrs.size or int(addrs.max()) + itemsize <= lo or int(addrs.min()) >= hi:
            return False
        for runs in (self._merged, *self._apart):
            if not len(runs):
                continue
            reach = np.maximum.accumulate(runs[:, 1])
            at = np.searchsorted(runs[:, 0], addrs + itemsize, side="left") - 1   # the last run starting before
            ok = at >= 0
            if (reach[at[ok]] > addrs[ok]).any():
                return True
        return False
