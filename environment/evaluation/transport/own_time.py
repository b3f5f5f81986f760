"""Deadlines on the time a process had, not the time the host took from it.

A wall-clock deadline on a child (30 s per command) or on a whole evaluation (180 s) reads a loaded host as a slow
submission: with more evaluations than cores, an honest kernel's replay ran past them and was scored as a timeout or
left unpriced. Linux counts, per thread, the time it spent runnable but waiting for a CPU (the second field of
/proc/<pid>/task/<tid>/schedstat). A deadline here runs on wall time less that wait (the most any one watched thread
waited, so threads of one process queueing behind each other count once), so a loop or a sleep still meets it as
before, and a process the host kept off its CPUs gets the time back, up to STARVED_CAP times the deadline in wall
time. Past that cap, with own time left, the host failed the evaluation, not the submission: the caller reports the
environment's failure (no score).

A submission cannot buy time this way: its own threads queueing behind each other use every core meanwhile, and its
CPU-time limit (RLIMIT_CPU) ends it long before the cap; it cannot make other processes hog the CPUs. Where
schedstat is not available, own time is wall time (the deadlines as before).
"""
from __future__ import annotations

import os
import select
import time
from typing import Callable, Iterable

# The most wall time a deadline of t seconds may take while the watched processes wait for a CPU: 4 t (a 2-core
# host running four evaluations gives each about half a core)
STARVED_CAP = 4.0


def _waits(pids: Iterable[int]) -> dict[tuple[int, int], float]:
    """Seconds each thread of the processes waited on a run queue so far, by (pid, tid)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    out[(pid, int(tid))] = int(f.read().split()[1]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
    return out


def group(pgid: int) -> list[int]:
    """The processes in process group pgid (an evaluation: evaluator, children and anything they left)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid:
                    pids.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return pids


class OwnClock:
    """Wall time since it started, less the most any watched thread has since waited for a CPU."""

    def __init__(self, pids: Callable[[], Iterable[int]]) -> None:
        self.pids = pids
        self.start = time.monotonic()
        self.base = _waits(pids())

    def wall(self) -> float:
        return time.monotonic() - self.start

    def waited(self) -> float:
        now = _waits(self.pids())
        return max([w - self.base.get(k, 0.0) for k, w in now.items()], default=0.0)

    def own(self) -> float:
        return self.wall() - min(self.wall(), max(0.0, self.waited()))


class Starved(Exception):
    """The host kept the watched processes off its CPUs past STARVED_CAP times the deadline: its failure."""


def wait_readable(fd: int, timeout_s: float, clock: OwnClock) -> float:
    """Wait until fd is readable or `timeout_s` of the clock's own time passed; returns the own time left (0 when it
    passed). Raises Starved when the wall time reaches STARVED_CAP x timeout_s with own time left."""
    while True:
        left = timeout_s - clock.own()
        if left <= 0:
            return 0.0
        if clock.wall() >= STARVED_CAP * timeout_s:
            raise Starved(f"the host kept it waiting for a CPU for {clock.waited():.0f} s of {clock.wall():.0f} s "
                          f"(it had {timeout_s - left:.0f} s of its {timeout_s:.0f} s)")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            return left
