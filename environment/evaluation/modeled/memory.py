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


def span_sectors(start: int, end: int) -> np.ndarray:
    if end <= start:
        return _EMPTY
    return np.arange(start // SECTOR, (end - 1) // SECTOR + 1, dtype=np.int64)


def tensor_sectors(t: torch.Tensor) -> np.ndarray:
    start, end, _ = tensor_span(t)
    return span_sectors(start, end)


class ProvenanceLedger:
    """Dirty and clean-written sectors of one counted call (sorted unique int64 arrays)."""

    def __init__(self) -> None:
        self.dirty = _EMPTY
        self.clean = _EMPTY
        self.tainted_launches: list[str] = []

    def host_data(self, sectors: np.ndarray) -> None:
        """Memory whose contents did not come from a counted launch (allocation, host lift)."""
        self.dirty = sorted_unique(np.concatenate([self.dirty, sectors]))
        self.clean = np.setdiff1d(self.clean, sectors, assume_unique=True)

    def launch(self, name: str, reads: np.ndarray, writes: np.ndarray) -> int:
        """Record a counted launch; returns the dirty bytes it read."""
        dirty_read = int(np.isin(reads, self.dirty, assume_unique=True).sum()) * SECTOR if reads.size else 0
        if dirty_read > DIRTY_READ_ALLOWANCE:
            self.tainted_launches.append(name)
            self.host_data(writes)
        else:
            self.dirty = np.setdiff1d(self.dirty, writes, assume_unique=True)
            self.clean = sorted_unique(np.concatenate([self.clean, writes]))
        return dirty_read

    def covered(self, t: torch.Tensor) -> tuple[int, int]:
        """(sectors of `t` written by clean counted launches, sectors of `t`)."""
        sectors = tensor_sectors(t)
        return int(np.isin(sectors, self.clean, assume_unique=True).sum()), int(sectors.size)
