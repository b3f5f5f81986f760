"""Evaluation time before and after a harness change, side by side (issue 9's cost of trusted accounting).

    PYTHONPATH=. python bench/accounting.py --base /path/to/old/checkout [--rounds 3]

Each round runs one process per checkout, alternating (old, new, old, new, ...) so drift on the
host hits both alike; each process starts its own warm pool, evaluates every shipped solution of
the three graded tasks once to warm caches (the sm_90 compile cache too), then times --repeat more
evaluations of each. Prints the median wall time per solution and the ratio new / old.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

TASKS = ("gelu_bias", "rmsnorm", "causal_attention")
PROBE = r"""
import json, sys, time
from environment.evaluation import harness
from environment.tasks import get_task
out = {}
for tid in %r:
    task = get_task(tid)
    for path in task.solutions["correct"]:
        harness.evaluate(task, path.read_text(), seed=1)
        times = []
        for i in range(%d):
            t = time.perf_counter()
            harness.evaluate(task, path.read_text(), seed=2 + i)
            times.append(time.perf_counter() - t)
        out[f"{tid}/{path.name}"] = times
print("RESULT " + json.dumps(out))
"""


def run(tree: Path, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", PROBE % (TASKS, repeat)], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=3600)
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    if not line:
        raise SystemExit(f"{tree}: the probe failed:\n{proc.stderr[-2000:]}")
    return json.loads(line[0][7:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, type=Path, help="checkout of the commit to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    new_tree = Path(__file__).resolve().parents[1]
    samples: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for _ in range(args.rounds):
        for label, tree in (("old", args.base.resolve()), ("new", new_tree)):
            for key, times in run(tree, args.repeat).items():
                samples[label].setdefault(key, []).extend(times)
    print(f"{'solution':<46} {'old s':>8} {'new s':>8} {'new/old':>8}")
    for key in sorted(set(samples["old"]) | set(samples["new"])):
        old, new = samples["old"].get(key), samples["new"].get(key)
        o = statistics.median(old) if old else float("nan")
        n = statistics.median(new) if new else float("nan")
        print(f"{key:<46} {o:>8.3f} {n:>8.3f} {n / o if old and new else float('nan'):>8.2f}")


if __name__ == "__main__":
    main()
