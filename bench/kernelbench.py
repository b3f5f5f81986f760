"""KernelBench levels 1-2 through the harness on this host: every problem loaded (or refused with
its reason), the reference-as-ModelNew and a wrong variant of each evaluated, and a table printed.

    PYTHONPATH=. python bench/kernelbench.py [--root ../shared/kernelbench] [--sample N] [--seed S]

Expected: every problem refused with a clear reason or evaluated as expected (reference correct,
wrong variant wrong); no correct reference failed as the submission's fault ("blamed").
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from environment.evaluation.harness import pool  # noqa: E402
from environment.tasks.kernelbench import problem_files  # noqa: E402
from environment.tasks.kernelbench_check import check_problem  # noqa: E402

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "kernelbench"


def _reason_kind(reason: str) -> str:
    return reason.split(":")[0].split("(")[0].strip()[:70]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("KERNELBENCH_ROOT", DEFAULT_ROOT)))
    parser.add_argument("--sample", type=int, default=0, help="check a random sample of this many problems")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every problem's record here")
    args = parser.parse_args()
    files = problem_files(args.root)
    if args.sample:
        files = sorted(random.Random(args.seed).sample(files, min(args.sample, len(files))))
    info = pool().describe()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, backend {info['backend']}; "
          f"{len(files)} problems from {args.root}", flush=True)
    started = time.perf_counter()
    checks = []
    for i, path in enumerate(files):
        check = check_problem(path, seed=args.seed)
        checks.append(check)
        state = ("as expected" if check.as_expected else f"NOT as expected ({check.detail})") if check.loaded \
            else f"refused: {check.reason}"
        print(f"[{i + 1}/{len(files)}] {check.id}: {state} [{sum(check.eval_s):.1f} s]", flush=True)
    loaded = [c for c in checks if c.loaded]
    evals = [s for c in loaded for s in c.eval_s]
    rows = [
        ("problems", len(checks)),
        ("loaded", len(loaded)),
        ("refused (with a reason)", len(checks) - len(loaded)),
        ("scaled to CPU trial sizes", sum(c.scaled for c in loaded)),
        ("evaluated as expected (reference correct, wrong variant wrong)", sum(c.as_expected for c in loaded)),
        ("reference failed as the submission's fault (blamed)", sum(c.blamed for c in loaded)),
        ("harness errors (reference or wrong variant)", sum("harness_error" in (c.right, c.wrong) for c in loaded)),
        ("wrong variant not caught", sum(c.wrong not in ("wrong", "harness_error") for c in loaded)),
        ("median evaluation s", f"{statistics.median(evals):.2f}" if evals else "n/a"),
        ("max evaluation s", f"{max(evals):.2f}" if evals else "n/a"),
        ("median load s", f"{statistics.median(c.load_s for c in checks):.2f}" if checks else "n/a"),
        ("total wall s", f"{time.perf_counter() - started:.0f}"),
    ]
    print("\n| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    refused = collections.Counter(_reason_kind(c.reason) for c in checks if not c.loaded)
    if refused:
        print("\n| refused because | problems |\n|---|---|")
        for kind, n in refused.most_common():
            print(f"| {kind} | {n} |")
        print("\nrefused, each with its reason:")
        for c in checks:
            if not c.loaded:
                print(f"- {c.id}: {c.reason}")
    odd = [c for c in loaded if not c.as_expected]
    if odd:
        print("\nnot as expected:")
        for c in odd:
            print(f"- {c.id}: reference {c.right}, wrong variant {c.wrong}: {c.detail}")
    if args.json:
        args.json.write_text(json.dumps([c.__dict__ for c in checks], indent=1))


if __name__ == "__main__":
    main()
