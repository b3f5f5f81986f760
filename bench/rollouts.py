"""Rollouts per minute the environment serves to a TRL trainer (issue 13, not a test).

C concurrent generations, each its own KernelToolEnv (the GRPO environment_factory adapter, one
WebSocket session each) driven the way GRPOTrainer drives it: reset(**row), submit_kernel(code),
get_reward(). The "policy" is scripted: each rollout submits a shipped correct PyTorch solution of
its row's task (one evaluation per rollout, max_turns 1), so the figures are the environment's side
only: a trainer adds its own generation time on top. Every reward is checked against the server's
record (/monitor), and errors are counted.

    PYTHONPATH=. python bench/rollouts.py                       # a server started here, C = 1 4 16
    PYTHONPATH=. python bench/rollouts.py --env-url http://127.0.0.1:8000 --concurrency 1 4 --rounds 3

A markdown table is printed; every figure comes from this run on this machine.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from environment.tasks import get_task  # noqa: E402
from environment.training import episode_reward  # noqa: E402
from environment.training.trl_env import KernelEnvFactory, build_rows  # noqa: E402
from inference import LocalServer  # noqa: E402

TASKS = ("gelu_bias", "rmsnorm", "softmax", "silu_mul")


def torch_solution(task_id: str) -> str:
    files = [p.read_text() for p in get_task(task_id).solutions["correct"]]
    return min((f for f in files if "triton" not in f), key=len)


@contextlib.contextmanager
def server(url: Optional[str]) -> Iterator[str]:
    if url:
        yield url.rstrip("/")
        return
    os.environ["KERNEL_ENV_MONITOR"] = "1"  # to check each reward against the server's record
    with LocalServer(start_timeout_s=240) as s:
        yield s.url


def server_reward(url: str, episode_id: str) -> Optional[float]:
    try:
        with urllib.request.urlopen(f"{url}/monitor/episodes/{episode_id}", timeout=60) as r:
            return episode_reward(json.loads(r.read())["rewards"])
    except OSError:
        return None  # monitor off on that server: not checked


def run(url: str, concurrency: int, rounds: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    factory = KernelEnvFactory(url)
    envs = [factory() for _ in range(concurrency)]
    latencies: list[float] = []
    outcomes: list[tuple[str, Optional[float]]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        env = envs[i]
        for r in range(rounds):
            row = rows[(i * rounds + r) % len(rows)]
            t0 = time.monotonic()
            try:
                env.reset(**row)
                env.submit_kernel(torch_solution(row["task_id"]))
                reward = env.get_reward()
            except Exception as e:  # counted, reported
                with lock:
                    errors.append(f"{type(e).__name__}: {e}"[:200])
                continue
            with lock:
                latencies.append(time.monotonic() - t0)
                outcomes.append((env.episode_id, reward))

    env_warm = [threading.Thread(target=e.reset, kwargs=rows[0]) for e in envs]  # open the sessions (untimed)
    for t in env_warm:
        t.start()
    for t in env_warm:
        t.join()
    for e in envs:
        e.get_reward()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    factory.close()
    mismatches = sum(1 for eid, reward in outcomes
                     if (s := server_reward(url, eid)) is not None and abs(s - (reward or 0.0)) > 1e-9)
    lat = sorted(latencies)
    return {"concurrency": concurrency, "rollouts": len(outcomes), "wall_s": wall,
            "per_min": 60.0 * len(outcomes) / wall if wall else 0.0,
            "p50": statistics.median(lat) if lat else float("nan"),
            "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan"),
            "unscored": factory.stats.get("unscored", 0), "errors": len(errors),
            "mismatches": mismatches, "mean_reward": statistics.mean([r for _, r in outcomes if r is not None] or [0])}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env-url", default=None)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--rounds", type=int, default=8, help="rollouts per generation slot")
    args = p.parse_args()
    with server(args.env_url) as url:
        rows = sorted(build_rows(url, TASKS, seeds=range(4), max_turns=1), key=lambda r: r["seed"])  # tasks cycle
        run(url, 1, len(TASKS), rows)  # warm-up, discarded: each task's first evaluation pays its imports
        results = [run(url, c, args.rounds, rows) for c in args.concurrency]
    base = results[0]["per_min"] or float("nan")
    print(f"\nRollouts against {url} (environment side only; scripted PyTorch submissions, 1 evaluation each; "
          f"{os.cpu_count()} CPUs, KERNEL_ENV_WORKERS={os.environ.get('KERNEL_ENV_WORKERS', 'default')})\n")
    print("| concurrent generations | rollouts | wall s | rollouts/min | vs 1 | p50 rollout s | p95 rollout s "
          "| mean reward | unscored | errors | reward != server |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['concurrency']} | {r['rollouts']} | {r['wall_s']:.1f} | {r['per_min']:.1f} | "
              f"{r['per_min'] / base:.2f}x | {r['p50']:.2f} | {r['p95']:.2f} | {r['mean_reward']:.3f} | "
              f"{r['unscored']} | {r['errors']} | {r['mismatches']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
