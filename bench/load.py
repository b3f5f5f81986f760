"""Load test (issue 5, not a test): N concurrent WebSocket sessions (KernelEnv client, one thread
each) play whole episodes with a random mix of correct, wrong and attacking PyTorch submissions
against a real server on a loopback port. Reports sessions completed, steps lost (must be 0),
errors, p50/p95 step latency and the peak RSS and PSS of the server plus its whole process tree.

    PYTHONPATH=. python bench/load.py --sessions 8 32 64 --turns 2
    PYTHONPATH=. python bench/load.py --capacity 4 --sessions 10   # beyond capacity: a clean refusal, never a hang

A markdown table is printed; every figure comes from this run on this machine.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from environment import KernelAction, KernelEnv  # noqa: E402
from environment.tasks import get_task  # noqa: E402
from environment.local_server import LocalServer  # noqa: E402
from tests.redteam.expected import EXPECTED  # noqa: E402

TASKS = ("gelu_bias", "rmsnorm", "softmax", "layernorm", "silu_mul", "scale_shift_relu")
ATTACKS = ROOT / "tests/redteam/attacks"


def submissions(task_id: str) -> dict[str, list[str]]:
    """PyTorch-only correct and wrong solutions of a task, and the red-team attacks aimed at it."""
    task = get_task(task_id)
    torch_only = lambda paths: [p.read_text() for p in paths if "triton" not in p.read_text()]  # noqa: E731
    wrong = torch_only(task.solutions.get("wrong", ())) or [
        task.reference_code.split("def get_inputs")[0].replace("class Model(", "class ModelNew(")
        .replace("return ", "return 0 * ", 1)]
    attacks = [(ATTACKS / name).read_text() for name, e in EXPECTED.items()
               if e.task == task_id and e.static_checks and not e.config]
    return {"correct": torch_only(task.solutions["correct"]), "wrong": wrong, "attack": attacks}


def tree_rss_kb(root: int) -> int:
    """Resident memory of root and every descendant (the zygotes, evaluators and sandboxed children)."""
    return _sum_field(root, "status", "VmRSS:")


def tree_pss_kb(root: int) -> int:
    """Proportional set size of the same tree: pages shared between forked processes (the zygote's
    torch and triton) are split among them, so this is the tree's real memory footprint."""
    return _sum_field(root, "smaps_rollup", "Pss:")


def _sum_field(root: int, proc_file: str, field: str) -> int:
    """Sum of a kB field of /proc/<pid>/<proc_file> over root and its descendants."""
    total = 0
    for pid in _members(root):
        try:
            for line in Path(f"/proc/{pid}/{proc_file}").read_text().splitlines():
                if line.startswith(field):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _members(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    members, changed = {root}, True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in members and pid not in members:
                members.add(pid)
                changed = True
    return members


@dataclass
class Tally:
    completed: int = 0
    refused: int = 0
    steps_sent: int = 0
    steps_answered: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    scores: list[tuple[str, str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def play(url: str, turns: int, rng: random.Random, tally: Tally, timeout_s: float) -> None:
    task_id = rng.choice(TASKS)
    pool = submissions(task_id)
    try:
        with KernelEnv(base_url=url, message_timeout_s=timeout_s, connect_timeout_s=60).sync() as env:
            env.reset(task_id=task_id, seed=rng.randrange(2**31), max_turns=turns)
            for turn in range(turns):
                kind = rng.choice([k for k in ("correct", "wrong", "attack") if pool[k]])
                code = rng.choice(pool[kind])
                with tally.lock:
                    tally.steps_sent += 1
                    tally.kinds[kind] = tally.kinds.get(kind, 0) + 1
                started = time.monotonic()
                result = env.step(KernelAction(code=code))
                elapsed = time.monotonic() - started
                obs = result.observation
                with tally.lock:
                    tally.steps_answered += 1
                    tally.latencies.append(elapsed)
                    tally.scores.append((task_id, kind, obs.score))
                    if kind == "correct" and not obs.correct:
                        tally.errors.append(f"{task_id}: a correct submission was judged wrong: {obs.error}")
                    if kind == "wrong" and obs.score > 0.40:
                        tally.errors.append(f"{task_id}: a wrong submission scored {obs.score}")
            with tally.lock:
                tally.completed += 1
    except Exception as exc:  # a refusal or a failure is a row in the report, not a crash of the bench
        with tally.lock:
            if "CAPACITY_REACHED" in str(exc):
                tally.refused += 1
            else:
                tally.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")


def honest_ceiling(url: str, timeout_s: float) -> dict[str, float]:
    """Best score of every shipped correct solution (PyTorch and Triton) per task, on this server:
    an attack may tie honest work, never beat it."""
    from environment import KernelAction, KernelEnv
    from environment.tasks import get_task
    ceiling: dict[str, float] = {}
    with KernelEnv(base_url=url, message_timeout_s=timeout_s).sync() as env:
        for task_id in TASKS:
            solutions = get_task(task_id).solutions["correct"]
            env.reset(task_id=task_id, seed=0, max_turns=len(solutions))
            for path in solutions:
                obs = env.step(KernelAction(code=path.read_text())).observation
                ceiling[task_id] = max(ceiling.get(task_id, 0.0), obs.score)
    return ceiling


def run_load(url: str, server_pid: int, sessions: int, turns: int, seed: int, timeout_s: float,
             ceiling: dict[str, float]) -> dict:
    tally = Tally()
    rng = random.Random(seed)
    peak = [tree_rss_kb(server_pid), tree_pss_kb(server_pid)]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.25):
            peak[0] = max(peak[0], tree_rss_kb(server_pid))
            peak[1] = max(peak[1], tree_pss_kb(server_pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    threads = [threading.Thread(target=play, args=(url, turns, random.Random(rng.random()), tally, timeout_s))
               for _ in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    best = dict(ceiling)
    for task_id, kind, value in tally.scores:
        if kind == "correct":
            best[task_id] = max(best.get(task_id, 0.0), value)
    for task_id, kind, value in tally.scores:  # an attack may tie honest work, never beat it
        if kind == "attack" and task_id in best and value > best[task_id]:
            tally.errors.append(f"{task_id}: an attack scored {value} above the best honest {best[task_id]}")
    lat = sorted(tally.latencies)
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")  # noqa: E731
    return {"sessions": sessions, "completed": tally.completed, "refused": tally.refused,
            "steps": tally.steps_answered, "lost": tally.steps_sent - tally.steps_answered,
            "errors": len(tally.errors), "p50": statistics.median(lat) if lat else float("nan"), "p95": pct(0.95),
            "wall": wall, "peak_rss_mb": peak[0] / 1024, "peak_pss_mb": peak[1] / 1024, "kinds": dict(tally.kinds), "error_list": tally.errors}


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--capacity", type=int, default=None, help="KERNEL_ENV_MAX_SESSIONS for the server")
    parser.add_argument("--timeout", type=float, default=900.0, help="per-message client timeout (s)")
    args = parser.parse_args(argv)
    capacity = args.capacity or max(args.sessions)
    os.environ["KERNEL_ENV_MAX_SESSIONS"] = str(capacity)
    os.environ.setdefault("TRITON_INTERPRET", "1")
    with LocalServer(start_timeout_s=300) as server:
        print(f"server {server.url} (pid {server.proc.pid}), max sessions {capacity}, {args.turns} turns, "
              f"{os.cpu_count()} cores", flush=True)
        ceiling = honest_ceiling(server.url, args.timeout)
        print(f"best honest score per task: {ceiling}", flush=True)
        rows = []
        for n in args.sessions:
            row = run_load(server.url, server.proc.pid, n, args.turns, args.seed + n, args.timeout, ceiling)
            rows.append(row)
            print(f"  N={n}: {row['completed']} completed, {row['refused']} refused, {row['lost']} steps lost, "
                  f"{row['errors']} errors, {row['wall']:.0f} s, mix {row['kinds']}", flush=True)
            for e in row["error_list"][:5]:
                print("    error:", e, flush=True)
    print("\n| sessions | completed | refused (capacity) | steps | steps lost | errors | p50 step (s) | "
          "p95 step (s) | wall (s) | peak RSS, server tree (MB) | peak PSS, server tree (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['sessions']} | {r['completed']} | {r['refused']} | {r['steps']} | {r['lost']} | {r['errors']} | "
              f"{r['p50']:.2f} | {r['p95']:.2f} | {r['wall']:.0f} | {r['peak_rss_mb']:.0f} | {r['peak_pss_mb']:.0f} |")


if __name__ == "__main__":
    main()
