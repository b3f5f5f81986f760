"""Fault injection: every way a submission can hang, crash or flood ends within the timeout plus a
second, is named in the result, leaves no process behind, and the pool keeps serving — including a
concurrent session's evaluation that runs while the fault does.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest

from environment import reward
from environment.config import harness_config
from environment.evaluation import flags as F
from environment.evaluation import harness
from environment.tasks import get_task

pytestmark = pytest.mark.slow
TIMEOUT_S = 5.0
CONFIG = dataclasses.replace(harness_config(), trials=2, timeout_s=TIMEOUT_S, total_timeout_s=30.0)
TASK = get_task("gelu_bias")
HONEST = next(p for p in TASK.solutions["correct"] if p.name.startswith("torch_")).read_text()

HEAD = "import os\nimport sys\nimport torch\nimport torch.nn as nn\n"
BODY = "\n\nclass ModelNew(nn.Module):\n    def forward(self, x, bias):\n{forward}\n"
GOOD_FORWARD = "        return nn.functional.gelu(x + bias)"


def submission(at_import: str = "", forward: str = GOOD_FORWARD) -> str:
    return HEAD + at_import + BODY.format(forward=forward)


SPARE_CHILDREN = 4  # candidate, reference, replayer and sampler, forked ahead for the next request


def leftovers(root: int) -> list[int]:
    """Live processes below zygote `root`, less its one idle spare evaluator and the spare's idle
    children (SPARE_CHILDREN of them, forked ahead for the next request, each with no children of
    its own). Escapees would be reparented to the zygote (a child subreaper), so they count here too."""
    children = _children()
    found = descendants(root, children)
    spares = [pid for pid in children.get(root, [])
              if len(children.get(pid, [])) == SPARE_CHILDREN and not any(children.get(c) for c in children[pid])]
    allowed = set(spares[:1]) | set(children.get(spares[0], []) if spares else [])
    return [pid for pid in found if pid not in allowed]


def settled_leftovers(root: int, within_s: float = 3.0) -> list[int]:
    """leftovers() once the freshly forked spare has finished forking its own children."""
    deadline = time.monotonic() + within_s
    while True:
        found = leftovers(root)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return children


def descendants(root: int, children: dict[int, list[int]]) -> list[int]:
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def zygote_pids() -> list[int]:
    return [z.proc.pid for z in harness.pool()._idle]


def honest_evaluation(session: str = "honest"):
    return harness.evaluate(TASK, HONEST, CONFIG, seed=1, session=session)


@pytest.fixture(scope="module", autouse=True)
def warm_pool():
    """Both workers warm before any timing is asserted (a cold zygote costs 10-30 s to start)."""
    results = []
    threads = [threading.Thread(target=lambda: results.append(honest_evaluation(f"warm-{i}"))) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.correct for r in results)
    yield


@pytest.fixture()
def baseline_s():
    """Wall time of one honest evaluation on this (busy, shared) host right now: the slack allowed."""
    started = time.monotonic()
    assert honest_evaluation().correct
    return time.monotonic() - started


FAULTS = {
    # name: (source, static_checks, text that must appear in load error / correctness error, extra flag)
    "infinite_loop_at_import": (submission("while True:\n    pass\n"), True, "ran past the time limit", F.TIMEOUT),
    "infinite_loop_in_forward": (submission(forward="        while True:\n            pass"), True,
                                 "ran past the time limit", F.TIMEOUT),
    "sleep_forever": (submission("import time\n", forward="        time.sleep(1e9)"), True,
                      "ran past the time limit", F.TIMEOUT),
    "catastrophic_regex_in_c": (submission("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')\n"), True,
                                "ran past the time limit", F.TIMEOUT),
    "huge_torch_op_in_c": (submission(forward="        big = torch.ones(4096, 4096)\n"
                                      "        for _ in range(10**6):\n            big = big @ big\n"
                                      "        return big"), True, "ran past the time limit", F.TIMEOUT),
    "memory_bomb_bytes": (submission("hog = bytearray(64 * 2**30)\n"), True, "MemoryError", F.MEMORY_LIMIT),
    "memory_bomb_growing": (submission("hog = []\nwhile True:\n    hog.append(torch.empty(2**28, dtype=torch.uint8))\n"),
                            True, "can't allocate memory", F.MEMORY_LIMIT),
    "memory_bomb_torch": (submission(forward="        return torch.empty(2**36, dtype=torch.float64)"), True,
                          "can't allocate memory", F.MEMORY_LIMIT),
    "fork_bomb": (submission("while True:\n    getattr(os, 'fork')()\n"), True,
                  "killed by the sandbox for a forbidden system call", F.SANDBOX_VIOLATION),
    "recursion_bomb": (submission("sys.setrecursionlimit(10**8)\n\ndef dive(n):\n    return max(map(dive, [n + 1]))\n\n"
                                  "dive(0)\n"), True, "segmentation fault", None),  # through C: overflows the C stack
    "segfault_faulthandler": (submission("import faulthandler\nfaulthandler._sigsegv()\n"), True,
                              "segmentation fault", None),
    "segfault_ctypes": (submission("import ctypes\nctypes.string_at(0)\n"), False, "segmentation fault", None),
    "abort": (submission("getattr(os, 'abort')()\n"), True, "SIGABRT", None),
    "exit_at_import": (submission("getattr(os, '_' + 'exit')(3)\n"), True, "exited with code 3 before answering", None),
    "sys_exit_at_import": (submission("sys.exit(0)\n"), True, "SystemExit", None),
    "output_flood_100mb": (submission("chunk = 'x' * 2**20\nfor _ in range(100):\n    print(chunk)\n"), True,
                           "File too large", F.OUTPUT_TRUNCATED),
    "close_result_channel_at_import": (submission("os.closerange(3, 1024)\n"), True,
                                       "closed its result channel before answering", None),
    "close_result_channel_in_forward": (submission(forward="        os.closerange(3, 1024)\n" + GOOD_FORWARD), True,
                                        "closed its result channel before answering", None),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_ends_in_time_with_a_named_cause_and_the_pool_keeps_serving(name, baseline_s):
    source, static_checks, text, flag = FAULTS[name]
    roots = zygote_pids()
    started = time.monotonic()
    result = harness.evaluate(TASK, source, CONFIG, seed=2, session=f"fault-{name}", static_checks=static_checks)
    elapsed = time.monotonic() - started
    cause = " | ".join(filter(None, [result.load and result.load.error,
                                     result.correctness and result.correctness.error]))
    described = f"{name}: {elapsed:.1f}s flags={result.flags} cause={cause!r} log={result.log[-300:]!r}"
    # the fault's own deadline plus a second, plus what an honest evaluation costs on this host now
    assert elapsed <= TIMEOUT_S + 1.0 + baseline_s, described
    assert text in cause or text in result.log, described
    if flag:
        assert flag in result.flags, described
    assert not result.correct and reward.score(result)[0] <= 0.40, described
    after = honest_evaluation()
    assert after.correct, f"the pool stopped serving after {name}: {after.load} {after.correctness}"
    for root in roots:
        assert settled_leftovers(root) == [], f"{name} left processes behind under zygote {root}"


def test_a_concurrent_session_is_unaffected_while_a_bomb_runs(monkeypatch):
    """While the bomb holds a worker, a bystander is given another at its first try and evaluates correctly
    (what each was given and when the bomb ended are recorded as they happen: no clock is compared)."""
    bomb = submission("hog = []\nfor _ in range(6):\n    hog.append(bytearray(2**28))\nwhile True:\n    pass\n")
    outcome, served = {}, {}
    bomb_holds_a_worker = threading.Event()
    queue = harness.pool()._queue
    real_acquire = queue.acquire

    def acquire(session, take):
        tries = []

        def recorded_take():
            got = take()
            tries.append(got is not None)
            return got
        got = real_acquire(session, recorded_take)
        served[session] = (tries, "bomb" in outcome)  # at its first try? the bomb over by then?
        if session == "bomber":
            bomb_holds_a_worker.set()
        return got
    monkeypatch.setattr(queue, "acquire", acquire)

    def run_bomb():
        try:
            outcome["bomb"] = harness.evaluate(TASK, bomb, CONFIG, seed=3, session="bomber")
        finally:
            bomb_holds_a_worker.set()  # never leave the main thread waiting

    thread = threading.Thread(target=run_bomb)
    thread.start()
    bomb_holds_a_worker.wait()
    honest = honest_evaluation("bystander")
    thread.join()
    assert honest.correct, f"{honest.load} {honest.correctness}"
    assert served["bystander"] == ([True], False), \
        f"the bystander waited for the bomb instead of running beside it: {served['bystander']}"
    assert F.TIMEOUT in outcome["bomb"].flags
