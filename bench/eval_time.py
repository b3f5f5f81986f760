"""Evaluation wall time (median of 5, with min/max) of a correct Triton and a correct PyTorch
solution for each graded task, on this machine, through the warm harness.

    PYTHONPATH=. python bench/eval_time.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("TRITON_INTERPRET", "1")

from environment.evaluation.harness import evaluate, pool  # noqa: E402
from environment.tasks import GRADED_TASKS, get_task  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    info = pool().describe()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, backend {info['backend']}; warm pool ready\n")
    print("| task | solution | median s | min s | max s | correct | speedup (kind) |")
    print("|---|---|---|---|---|---|---|")
    for task_id in GRADED_TASKS:
        task = get_task(task_id)
        for prefix in ("triton", "torch"):
            path = next(p for p in task.solutions["correct"] if p.name.startswith(prefix))
            source = path.read_text()
            evaluate(task, source, seed=0)  # first interpreted launch compiles nothing, but warms caches
            times, result = [], None
            for i in range(args.repeats):
                start = time.perf_counter()
                result = evaluate(task, source, seed=i)
                times.append(time.perf_counter() - start)
            p = result.performance
            speed = f"{p.speedup:.3f} ({p.speedup_kind})" if p and p.speedup else "n/a"
            print(f"| {task_id} | {path.name} | {statistics.median(times):.3f} | {min(times):.3f} | "
                  f"{max(times):.3f} | {result.correct} | {speed} |")


if __name__ == "__main__":
    main()
