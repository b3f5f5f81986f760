"""Harness benchmarks (issue 6): overhead vs a fresh interpreter per evaluation, overhead ratio,
throughput under concurrency, determinism, modeled speedups of every shipped correct solution, and
evaluation time per graded task (optionally side by side with another checkout of this repository).
Tables are printed as Markdown; every figure comes from this run, side by side on this machine.

    PYTHONPATH=. python bench/harness.py [--sections overhead,ratio,throughput,determinism,modeled,evaltime]
    PYTHONPATH=. python bench/harness.py --sections evaltime --against /path/to/other/checkout [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

from environment.evaluation.harness import evaluate, pool  # noqa: E402
from environment.tasks import GRADED_TASKS, get_task, list_tasks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"


def _solution(task, prefix: str) -> Path:
    return next(p for p in task.solutions["correct"] if p.name.startswith(prefix))


def overhead(repeats: int) -> None:
    print("\n### Warm harness vs fresh interpreter per evaluation (PyTorch solution; seconds, median (min–max))\n")
    print("| task | warm harness | fresh interpreter | fresh ÷ warm |")
    print("|---|---|---|---|")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for task_id in GRADED_TASKS:
        task = get_task(task_id)
        path = _solution(task, "torch")
        source = path.read_text()
        evaluate(task, source)
        warm, fresh = [], []
        for i in range(repeats):  # interleaved, so load on the machine hits both alike
            start = time.perf_counter()
            evaluate(task, source, seed=i)
            warm.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "bench/fresh_baseline.py"), task_id, str(path)], env=env,
                           check=True, capture_output=True)
            fresh.append(time.perf_counter() - start)
        print(f"| {task_id} | {_fmt(warm)} | {_fmt(fresh)} | {statistics.median(fresh) / statistics.median(warm):.1f}x |")


def ratio(repeats: int) -> None:
    print("\n### Overhead ratio: evaluation wall time ÷ time inside candidate and reference forward calls\n")
    print("| task | solution | wall s | compute s | ratio |")
    print("|---|---|---|---|---|")
    for task_id in GRADED_TASKS:
        task = get_task(task_id)
        for prefix in ("torch", "triton"):
            source = _solution(task, prefix).read_text()
            walls, computes = [], []
            for i in range(repeats):
                start = time.perf_counter()
                r = evaluate(task, source, seed=i)
                walls.append(time.perf_counter() - start)
                computes.append(r.compute_s)
            w, c = statistics.median(walls), statistics.median(computes)
            print(f"| {task_id} | {prefix} | {w:.3f} | {c:.3f} | {w / c if c else float('inf'):.2f} |")


def throughput(seconds: float) -> None:
    print(f"\n### Throughput: evaluations per minute (gelu_bias PyTorch solution, {seconds:.0f} s per level, "
          f"{pool().workers} workers)\n")
    print("| concurrent sessions | evaluations/min | median latency s | p95 latency s |")
    print("|---|---|---|---|")
    task = get_task("gelu_bias")
    source = _solution(task, "torch").read_text()
    for n in (1, 2, 4, 8):
        latencies: list[float] = []
        stop = time.monotonic() + seconds
        lock = threading.Lock()

        def session(k: int) -> None:
            i = 0
            while time.monotonic() < stop:
                start = time.perf_counter()
                evaluate(task, source, seed=i, session=f"s{k}")
                with lock:
                    latencies.append(time.perf_counter() - start)
                i += 1

        threads = [threading.Thread(target=session, args=(k,)) for k in range(n)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        lat = sorted(latencies)
        print(f"| {n} | {len(lat) / elapsed * 60:.0f} | {statistics.median(lat):.3f} | "
              f"{lat[int(0.95 * (len(lat) - 1))]:.3f} |")


def determinism(repeats: int) -> None:
    print(f"\n### Determinism: the same submission {repeats} times\n")
    print("| task | solution | kind | distinct speedups | median | coefficient of variation |")
    print("|---|---|---|---|---|---|")
    for task_id, prefix in (("gelu_bias", "triton"), ("gelu_bias", "torch"), ("rmsnorm", "triton")):
        task = get_task(task_id)
        source = _solution(task, prefix).read_text()
        values, kind = [], None
        for i in range(repeats):
            p = evaluate(task, source, seed=i).performance
            if p is not None and p.speedup is not None:
                values.append(p.speedup)
                kind = p.speedup_kind
        if not values:
            print(f"| {task_id} | {prefix} | none | 0 | n/a | n/a |")
            continue
        cv = statistics.pstdev(values) / statistics.mean(values) if len(values) > 1 else 0.0
        print(f"| {task_id} | {prefix} | {kind} | {len(set(values))} | {statistics.median(values):.4f} | {cv:.4f} |")


def modeled() -> None:
    print("\n### Modeled speedups of the shipped correct solutions (H100 SXM roofline estimate, not measured)\n")
    print("| task | difficulty | solution | correct | speedup | kind | priced at | of peak | score |")
    print("|---|---|---|---|---|---|---|---|---|")
    from environment import reward
    for task in list_tasks():
        for path in task.solutions.get("correct", ()):
            r = evaluate(task, path.read_text(), seed=0)
            p = r.performance
            s = f"{p.speedup:.3f}" if p and p.speedup else "n/a"
            cost = p.modeled_candidate if p else None
            shape = "×".join(str(v) for v in cost.shape.values()) if cost and cost.shape else "n/a"
            peak = f"{cost.peak_fraction:.0%}" if cost else "n/a"
            print(f"| {task.id} | {task.difficulty} | {path.name} | {r.correct} | {s} | "
                  f"{p.speedup_kind if p else None} | {shape} | {peak} | {reward.score(r)[0]:.3f} |", flush=True)


def evaltime(repeats: int) -> dict[str, dict[str, list[float]]]:
    """Wall time of a whole evaluation and of its correctness stage, per graded task and shipped
    correct solution (seeds 0..repeats-1, after one warm-up evaluation), as lists of samples."""
    rows: dict[str, dict[str, list[float]]] = {}
    for task_id in GRADED_TASKS:
        task = get_task(task_id)
        for prefix in ("torch", "triton"):
            source = _solution(task, prefix).read_text()
            evaluate(task, source, seed=10_000)
            walls, trials = [], []
            for i in range(repeats):
                start = time.perf_counter()
                r = evaluate(task, source, seed=i)
                walls.append(time.perf_counter() - start)
                trials.append(r.stage_s.get("correctness", 0.0))
                assert r.correct, (task_id, prefix, r.correctness)
            rows[f"{task_id}/{prefix}"] = {"wall": walls, "correctness": trials}
    return rows


def _merge(into: dict, rows: dict) -> dict:
    for key, row in rows.items():
        for field, samples in row.items():
            into.setdefault(key, {}).setdefault(field, []).extend(samples)
    return into


def evaltime_table(rows: dict, against: dict | None, label: str) -> None:
    med = statistics.median
    print("\n### Evaluation time per graded task (seconds, median; correctness = the trials stage)\n")
    if against is None:
        print("| task/solution | wall | correctness |")
        print("|---|---|---|")
        for key, row in rows.items():
            print(f"| {key} | {med(row['wall']):.3f} | {med(row['correctness']):.3f} |")
        return
    print(f"| task/solution | wall, {label} | wall, this checkout | change | correctness, {label} | "
          "correctness, this checkout |")
    print("|---|---|---|---|---|---|")
    for key, row in rows.items():
        base = against[key]
        print(f"| {key} | {med(base['wall']):.3f} | {med(row['wall']):.3f} | "
              f"{med(row['wall']) / med(base['wall']) - 1:+.0%} | {med(base['correctness']):.3f} | "
              f"{med(row['correctness']):.3f} |")
    total_base = sum(med(r["wall"]) for r in against.values())
    total = sum(med(r["wall"]) for r in rows.values())
    print(f"| all graded (sum of medians) | {total_base:.3f} | {total:.3f} | {total / total_base - 1:+.0%} | | |")


def _run_elsewhere(checkout: str, repeats: int) -> dict:
    """Run the evaltime section with another checkout's harness (its code, its zygote)."""
    env = dict(os.environ, PYTHONPATH=checkout)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--sections", "evaltime", "--json",
                          "--repeats", str(repeats)], env=env, cwd=checkout, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def evaltime_side_by_side(checkout: str, repeats: int, rounds: int) -> None:
    """Alternate rounds of the other checkout and this one, so load on a shared machine hits both alike."""
    theirs: dict = {}
    mine: dict = {}
    for _ in range(rounds):
        _merge(theirs, _run_elsewhere(checkout, repeats))
        _merge(mine, evaltime(repeats))
    evaltime_table(mine, theirs, Path(checkout).name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="overhead,ratio,throughput,determinism,modeled")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--against", help="another checkout (e.g. the base commit) to time side by side (evaltime)")
    parser.add_argument("--rounds", type=int, default=3, help="evaltime --against: alternating rounds")
    parser.add_argument("--json", action="store_true", help="evaltime only: print the rows as one JSON line")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(evaltime(args.repeats)))
        return
    info = pool().describe()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"backend {info['backend']}, workers {info['workers']}")
    sections = args.sections.split(",")
    if "overhead" in sections:
        overhead(args.repeats)
    if "ratio" in sections:
        ratio(args.repeats)
    if "throughput" in sections:
        throughput(args.seconds)
    if "determinism" in sections:
        determinism(10)
    if "modeled" in sections:
        modeled()
    if "evaltime" in sections:
        if args.against:
            evaltime_side_by_side(args.against, args.repeats, args.rounds)
        else:
            evaltime_table(evaltime(args.repeats), None, "")


if __name__ == "__main__":
    main()
