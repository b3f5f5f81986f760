"""What one Triton launch did: sectors moved, work per precision, programs, the busiest program,
the launch signature (for the AOT compile), and reads of data that another program of the same
launch wrote (a race on a GPU, where programs run concurrently; the interpreter runs them in turn).
"""
from __future__ import annotations

import inspect
from collections import defaultdict

import numpy as np

from environment.evaluation.modeled.byte_runs import StoredRuns, runs_of
from environment.evaluation.modeled.memory import SECTOR, element_sectors, sorted_unique

_EMPTY = np.zeros(0, dtype=np.int64)


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    name = getattr(value, "name", None)
    if name is not None and type(value).__module__.startswith("triton.language"):
        return {"tl_dtype": name}
    return {"unsupported": type(value).__name__}


def launch_signature(executor, args, kwargs) -> dict:
    """Name, argument types, constexpr values, divisibility hints and options of a launch, as the
    JIT would specialise them (so the AOT compile sees the same kernel)."""
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl

    params = inspect.signature(executor.fn).parameters
    passed = {k: v for k, v in kwargs.items() if k in params}
    bound = inspect.signature(executor.fn).bind_partial(*args, **passed)
    bound.apply_defaults()
    signature, constexprs, aligned = {}, {}, []
    for name in executor.arg_names:
        value = bound.arguments.get(name)
        if name in executor.constexprs:
            signature[name], constexprs[name] = "constexpr", _jsonable(value)
            continue
        kind, spec = native_specialize_impl(BaseBackend, value, False, True, True)
        signature[name] = kind
        if kind == "constexpr":
            constexprs[name] = _jsonable(value)
        elif spec == "D":
            aligned.append(name)
    options = {k: kwargs[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if kwargs.get(k) is not None}
    return {"name": executor.fn.__name__, "signature": signature, "constexprs": constexprs,
            "aligned": aligned, "options": options}


class ProgramTooLong(Exception):
    """A sampled program ran past its budget of memory instructions (TritonLaunch.access_budget)."""


class TritonLaunch:
    def __init__(self, name: str, signature: dict, addresses: bool = True) -> None:
        """addresses=False: keep no per-element addresses of loads (no cross-program race check), as
        the sampled replay at the GPU shape does, where a program may read hundreds of MiB."""
        self.addresses = addresses
        self.name = name
        self.signature = signature
        self.phase = "kernel"      # "bookkeeping" while the interpreter copies arguments
        self.suppress = 0          # >0 inside a reduction's combine function
        self.programs = 0
        self.sector_bytes = 0      # per-instruction sectors, summed
        self.flops: dict[str, float] = defaultdict(float)
        self._sectors = {"read": [], "write": []}
        self._addrs = {"read": ([], []), "write": ([], []), "atomic": ([], [])}
        self._program_bytes = 0
        self._program_flops: dict[str, float] = defaultdict(float)
        self.program_bytes_max = 0
        self.program_flops_max: dict[str, float] = {}
        self._program_accesses = 0     # memory instructions the program executed (spill pricing, model.py)
        self.access_budget = 0         # >0: the most one program may execute (the sampled replay's bound)
        self.program_accesses_max = 0
        # per program, for a sampled launch (replay/sampled.py scales these to the whole grid)
        self.per_program: list[dict] = []
        self._program_sectors: dict[str, list] = {"read": [], "write": []}
        self.store_log: list[tuple[np.ndarray, int]] = []   # (byte addresses, itemsize) of every store
        self.store_program: list[int] = []                   # the program (index into per_program) of each
        self.store_atomic: list[bool] = []                   # whether each was an atomic (else a plain store)
        self._earlier: StoredRuns | None = None   # bytes the finished programs stored (watch_order: sampled launches)
        self._stores_from = 0            # the current program's first entry in store_log
        self.reads_earlier_stores = False   # a program loaded bytes an earlier program of the launch stored

    def watch_order(self) -> None:
        """Note from now on whether a program loads bytes an earlier program of the launch stored (the sampled
        replay's order check, replay/tickets.py; other launches skip the work)."""
        self._earlier = StoredRuns()
        self._stores_from = len(self.store_log)

    def program(self) -> None:
        self._close_program()
        self.programs += 1

    def _close_program(self) -> None:
        unique = {}
        for side, parts in self._program_sectors.items():
            unique[side] = sorted_unique(np.concatenate(parts)) if parts else _EMPTY
            if parts:
                self._sectors[side].append(unique[side])
        if self.programs:
            self.per_program.append({"sectors": self._program_bytes, "read": int(unique["read"].size),
                                     "write": int(unique["write"].size), "flops": dict(self._program_flops),
                                     "written": unique["write"]})
        self._program_sectors = {"read": [], "write": []}
        mine = self.store_log[self._stores_from:] if self._earlier is not None else []
        if mine:
            self._earlier.add(runs_of(np.concatenate([a for a, _ in mine]),
                                      np.concatenate([np.full(a.size, z, dtype=np.int64) for a, z in mine])))
        self._stores_from = len(self.store_log)
        self.program_bytes_max = max(self.program_bytes_max, self._program_bytes)
        self.program_accesses_max = max(self.program_accesses_max, self._program_accesses)
        self._program_accesses = 0
        # per precision, the most any program did: the busiest program's compute time is at most their sum's,
        # and exactly it when every program does the same kinds of work. Taking the one program with the
        # largest raw FLOP sum let cheap int8 dots in a corner stand in for the heaviest block (red team a114)
        for key, value in self._program_flops.items():
            self.program_flops_max[key] = max(self.program_flops_max.get(key, 0.0), value)
        self._program_bytes = 0
        self._program_flops = defaultdict(float)

    def access(self, kind: str, ptrs, mask, itemsize: int) -> None:
        ptrs = np.asarray(ptrs)
        addrs = ptrs.ravel() if mask is None else ptrs[np.broadcast_to(np.asarray(mask), ptrs.shape)]
        addrs = addrs.astype(np.int64)
        sectors = element_sectors(addrs, itemsize)
        moved = int(sectors.size) * SECTOR * (2 if kind == "atomic" else 1)
        self.sector_bytes += moved
        self._program_bytes += moved
        self._program_accesses += 1
        if self.access_budget and self._program_accesses > self.access_budget:
            raise ProgramTooLong(self._program_accesses)
        for side in (("read", "write") if kind == "atomic" else (kind,)):
            self._program_sectors[side].append(sectors)
        if kind == "read" and self._earlier is not None and not self.reads_earlier_stores:
            # a flag or counter another program stored: an order the GPU chooses (replay/tickets.py)
            self.reads_earlier_stores = self._earlier.read(addrs, itemsize)
        if kind != "read":
            self.store_log.append((addrs, itemsize))
            self.store_program.append(self.programs - 1)
            self.store_atomic.append(kind == "atomic")
        if not self.addresses and kind == "read":
            return
        got, progs = self._addrs[kind]
        got.append(addrs)
        progs.append(np.full(addrs.size, self.programs, dtype=np.int64))

    def sectors(self, side: str) -> np.ndarray:
        """Sectors the launch's programs read ("read", atomics included) or wrote ("write"), with repeats."""
        return np.concatenate(self._sectors[side]) if self._sectors[side] else _EMPTY

    def atomics(self) -> bool:
        """Whether a program so far added into memory atomically (an atomic masked whole adds nothing: red team
        a261 passed a slot list's launch for a split-K that way)."""
        return any(a.size for a in self._addrs["atomic"][0])

    def atomic_addresses(self, k: int) -> np.ndarray:
        """Byte addresses the k-th program run (from 0) added into atomically, unique."""
        addrs, progs = self._flat("atomic")
        return np.unique(addrs[progs == k + 1]) if addrs.size else addrs   # programs count from 1 as they run

    def op(self, key: str, count: float) -> None:
        self.flops[key] += count
        self._program_flops[key] += count

    def read_so_far(self) -> np.ndarray:
        """The sectors every program run so far read, the one still running included (sorted, unique)."""
        parts = self._sectors["read"] + self._program_sectors["read"]
        return sorted_unique(np.concatenate(parts)) if parts else _EMPTY

    def _unique(self, side: str) -> np.ndarray:
        parts = self._sectors[side]
        return sorted_unique(np.concatenate(parts)) if parts else _EMPTY

    def _flat(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        got, progs = self._addrs[kind]
        if not got:
            return _EMPTY, _EMPTY
        return np.concatenate(got), np.concatenate(progs)

    def cross_program_raw(self, reads: np.ndarray, writes: np.ndarray) -> dict | None:
        """Addresses one program wrote with a plain store and another program read (atomics are
        synchronisation and excluded). None when there are none. `reads`/`writes` are the
        launch's unique sectors: disjoint ones (the common case) settle it cheaply."""
        if not np.intersect1d(reads, writes, assume_unique=True).size:
            return None
        w_addr, w_prog = self._flat("write")
        r_addr, r_prog = self._flat("read")
        atomic, _ = self._flat("atomic")
        if not w_addr.size or not r_addr.size:
            return None

        def prog_range(addr, prog):
            keys, inverse = np.unique(addr, return_inverse=True)
            low = np.full(keys.size, np.iinfo(np.int64).max)
            high = np.full(keys.size, -1)
            np.minimum.at(low, inverse, prog)
            np.maximum.at(high, inverse, prog)
            return keys, low, high

        wk, wl, wh = prog_range(w_addr, w_prog)
        rk, rl, rh = prog_range(r_addr, r_prog)
        common = np.setdiff1d(np.intersect1d(wk, rk, assume_unique=True), atomic)
        if not common.size:
            return None
        iw, ir = np.searchsorted(wk, common), np.searchsorted(rk, common)
        same = (wl[iw] == wh[iw]) & (rl[ir] == rh[ir]) & (wl[iw] == rl[ir])
        racy = np.flatnonzero(~same)
        if not racy.size:
            return None
        first = racy[0]
        return {"kernel": self.name, "addresses": int(racy.size),
                "writer_program": int(wl[iw][first]),
                "reader_program": int(rl[ir][first] if rl[ir][first] != wl[iw][first] else rh[ir][first])}

    def finish(self) -> tuple[dict, np.ndarray, np.ndarray]:
        """(record, read sectors, written sectors)."""
        self._close_program()
        reads, writes = self._unique("read"), self._unique("write")
        record = {
            "name": self.name, "kind": "triton", "programs": self.programs,
            "constexprs": self.signature["constexprs"], "options": self.signature["options"],
            "bytes_unique": int(reads.size + writes.size) * SECTOR,
            "bytes_sectors": int(self.sector_bytes),
            "flops": {k: float(v) for k, v in sorted(self.flops.items())},
            "program_bytes_max": int(self.program_bytes_max),
            "program_flops_max": {k: float(v) for k, v in sorted(self.program_flops_max.items())},
            "program_accesses_max": int(self.program_accesses_max),
            "signature": self.signature,   # joins the record to its sm_90 compile (occupancy.attach)
        }
        return record, reads, writes
