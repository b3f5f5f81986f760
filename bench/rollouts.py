"""Rollouts per minute one TRL trainer gets from the environment: serial tool calls against batched (not a test).

One trainer, one generation batch of B rollouts at a time, driven the way TRL 1.16's
``GRPOTrainer._tool_call_loop`` drives its ``environment_factory``: ``reset(**row)`` for each rollout, then
each rollout's ``submit_kernel`` call in turn, TRL's order, then ``get_reward()``. Two modes, alternated batch
by batch on the same server and the same rows:

- serial: TRL's loop as it is (``KernelEnvFactory(parallel=1)``): one evaluation in flight.
- batched: the same loop under ``KernelEnvFactory.watch`` (what ``KernelGRPOTrainer`` does): the first call
  of the round begins every rollout's evaluation at once; TRL's calls collect them in order.

The "policy" is scripted: each rollout submits a shipped correct PyTorch solution of its row's task (one
evaluation per rollout, max_turns 1), so the figures are the environment's side only. Every reward is
checked against the server's record (/monitor), and the two modes' rewards row by row.

    PYTHONPATH=. python bench/rollouts.py                       # a server started here, B = 16, 2 batches per mode
    PYTHONPATH=. python bench/rollouts.py --env-url http://127.0.0.1:8000 --batch 32 --batches 3

A markdown table is printed; every figure comes from this run on this machine.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from environment.tasks import get_task  # noqa: E402
from environment.training import episode_reward  # noqa: E402
from environment.training.trl_env import TOOL_NAME, KernelEnvFactory, build_rows  # noqa: E402
from environment.local_server import LocalServer  # noqa: E402

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


def tool_call(code: str) -> dict[str, Any]:
    """An assistant message calling submit_kernel, as TRL's parse_response returns it."""
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": TOOL_NAME, "arguments": {"code": code}}}]}


def play_batch(factory: KernelEnvFactory, envs: list, rows: list[dict[str, Any]]) -> list[tuple[str, Optional[float]]]:
    """One generation batch through TRL's order of calls: resets, one round of tool calls, rewards."""
    for env, row in zip(envs, rows):
        env.reset(**row)
    completions = [[tool_call(torch_solution(row["task_id"]))] for row in rows]
    with factory.watch(envs, completions):
        for env, messages in zip(envs, completions):  # TRL: each rollout's call in turn, waiting for its result
            result = env.submit_kernel(**messages[-1]["tool_calls"][0]["function"]["arguments"])
            messages.append({"role": "tool", "name": TOOL_NAME, "content": result})
    return [(env.episode_id, env.get_reward()) for env in envs]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env-url", default=None)
    p.add_argument("--batch", type=int, default=16, help="rollouts per generation batch (B)")
    p.add_argument("--batches", type=int, default=2, help="timed batches per mode (alternated)")
    args = p.parse_args()
    modes = ("serial", "batched")
    with server(args.env_url) as url:
        base = sorted(build_rows(url, TASKS, seeds=range(args.batch), max_turns=1), key=lambda r: r["seed"])
        factories = {m: KernelEnvFactory(url, parallel=1 if m == "serial" else 64) for m in modes}
        envs = {m: [f() for _ in range(args.batch)] for m, f in factories.items()}
        play_batch(factories["batched"], envs["batched"][:len(TASKS)], base[:len(TASKS)])  # warm-up, discarded
        wall = {m: 0.0 for m in modes}
        played: dict[str, list[tuple[str, Optional[float]]]] = {m: [] for m in modes}
        for b in range(args.batches):
            rows = [base[(b * args.batch + i) % len(base)] for i in range(args.batch)]
            for mode in (modes if b % 2 == 0 else modes[::-1]):
                t0 = time.monotonic()
                played[mode] += play_batch(factories[mode], envs[mode], rows)
                wall[mode] += time.monotonic() - t0
        for f in factories.values():
            f.close()
        rewards = {m: [r for _, r in played[m]] for m in modes}
        mismatch = {m: sum(1 for eid, r in played[m] if (s := server_reward(url, eid)) is not None
                           and abs(s - (r if r is not None else float("nan"))) > 1e-9) for m in modes}
    same = sum(1 for a, b in zip(rewards["serial"], rewards["batched"]) if a == b)
    workers = os.environ.get("KERNEL_ENV_WORKERS", "default (min(2, cores))")
    print(f"\nOne trainer against {url}: generation batches of {args.batch} rollouts, {args.batches} per mode, "
          f"alternated (scripted PyTorch submissions, 1 evaluation each; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, KERNEL_ENV_WORKERS={workers})\n")
    print("| mode | rollouts | wall s | rollouts/min | vs serial | mean reward | unscored | reward != server |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    per_min = {m: 60.0 * len(played[m]) / wall[m] for m in modes}
    for m in modes:
        scored = [r for r in rewards[m] if r is not None]
        print(f"| {m} | {len(played[m])} | {wall[m]:.1f} | {per_min[m]:.1f} | {per_min[m] / per_min['serial']:.2f}x | "
              f"{statistics.mean(scored or [0]):.3f} | {len(rewards[m]) - len(scored)} | {mismatch[m]} |")
    print(f"\nsame reward row by row in both modes: {same}/{len(rewards['serial'])}; batched run-ahead calls: "
          f"{factories['batched'].stats.get('run_ahead', 0)}, mismatched or unclaimed: "
          f"{factories['batched'].stats.get('ahead_mismatch', 0) + factories['batched'].stats.get('ahead_unclaimed', 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
