"""Deadlines on a child's own time (transport/own_time.py): real processes on one pinned CPU, starved by real
CPU hogs. A child the host keeps waiting gets the time back; a sleeping or looping child meets its deadline as
before; a child starved past the cap is the environment's failure (HarnessFault), never a timeout of the submission.
No wall-clock figure is asserted: the outcomes are."""
from __future__ import annotations

import os
import signal
import time

import pytest

from environment.evaluation.faults import HarnessFault
from environment.evaluation.transport import own_time
from environment.evaluation.transport.children import ChildDied, ChildHandle

CPU = min(os.sched_getaffinity(0))


def _spin(seconds: float) -> None:
    """Burn `seconds` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _fork(body) -> int:
    pid = os.fork()
    if pid == 0:   # pragma: no cover - runs in the child
        try:
            os.sched_setaffinity(0, {CPU})
            body()
        finally:
            os._exit(0)
    return pid


@pytest.fixture
def hogs():
    """Start n processes spinning on the same CPU as the watched child."""
    started: list[int] = []

    def start(n: int) -> None:
        started.extend(_fork(lambda: _spin(3600)) for _ in range(n))
    yield start
    for pid in started:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _worker(cpu_s: float, sleep_s: float = 0.0) -> tuple[int, int]:
    """A process that spins cpu_s of CPU time (or sleeps sleep_s), then writes one byte: (pid, read end)."""
    r, w = os.pipe()

    def body():
        os.close(r)
        if sleep_s:
            time.sleep(sleep_s)
        _spin(cpu_s)
        os.write(w, b"x")
    pid = _fork(body)
    os.close(w)
    return pid, r


def _reap(pid: int, fd: int) -> None:
    os.close(fd)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="the kernel keeps no schedstat")
def test_a_child_the_host_keeps_off_its_cpu_gets_the_time_back(hogs, monkeypatch):
    # 0.6 s of CPU on a CPU shared with three hogs takes at least 2.4 s of wall time: on wall time it would miss a
    # 1.2 s deadline, on its own time it meets it (the cap lifted: how long this host's other load adds is not asked)
    monkeypatch.setattr(own_time, "STARVED_CAP", 1000.0)
    hogs(3)
    pid, fd = _worker(0.6)
    try:
        clock = own_time.OwnClock(lambda: [pid])
        assert own_time.wait_readable(fd, 1.2, clock) > 0
        assert clock.wall() > 1.2 and clock.waited() > 0.6   # it did wait on the run queue
    finally:
        _reap(pid, fd)


def test_a_sleeping_child_meets_its_deadline_as_on_wall_time(hogs):
    hogs(3)
    pid, fd = _worker(0.0, sleep_s=30)
    try:
        clock = own_time.OwnClock(lambda: [pid])
        assert own_time.wait_readable(fd, 0.5, clock) == 0.0   # its deadline, not the host's failure
    finally:
        _reap(pid, fd)


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="the kernel keeps no schedstat")
def test_a_child_starved_past_the_cap_is_the_environments_failure_not_a_timeout(hogs):
    # eight hogs leave a spinning child a ninth of the CPU: 4 x 0.4 s of wall time gives it ~0.18 s of its 0.4 s
    hogs(8)

    def spin_forever(nonce, cmd_fd, res_fd):
        os.sched_setaffinity(0, {CPU})
        _spin(3600)
    child = ChildHandle(spin_forever, role="candidate")
    try:
        with pytest.raises(HarnessFault, match="waiting for a CPU"):
            child.receive(object, 0.4)
    finally:
        child.kill()
        child.wait()


def test_a_looping_child_still_times_out_as_the_submissions_fault():
    child = ChildHandle(lambda nonce, cmd_fd, res_fd: _spin(3600), role="candidate")
    try:
        with pytest.raises(ChildDied) as died:
            child.receive(object, 1.0)
        assert died.value.timeout and "ran past the time limit" in died.value.reason
    finally:
        child.kill()
        child.wait()


def test_the_group_of_an_evaluation_lists_its_processes():
    pid = _fork(lambda: (os.setpgid(0, 0), time.sleep(30)))
    try:
        deadline = time.monotonic() + 10
        while pid not in own_time.group(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert own_time.group(pid) == [pid]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
