"""Time of judging one output (environment/evaluation/evaluator/compare.py) at GPU-shape sizes: what the evaluator
spends per trial and per fetched timed output on a CUDA host, where outputs are 8192 x 8192 and more. Optionally side
by side with another checkout's compare.py, in alternating rounds. Prints a Markdown table.

    PYTHONPATH=. python bench/judge.py [--against /path/to/other/checkout] [--rounds 3] [--size 8192]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def _load(checkout: Path):
    path = checkout / "environment" / "evaluation" / "evaluator" / "compare.py"
    spec = importlib.util.spec_from_file_location(f"compare_{abs(hash(str(checkout)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(size: int) -> dict[str, tuple]:
    """(expected, actual, oracle) per case: an honest output, one element off, every element off (the oracle consulted)."""
    g = torch.Generator().manual_seed(0)
    expected = torch.randn(size, size, generator=g)
    honest = expected + 1e-7 * torch.randn(size, size, generator=g)
    one_off = honest.clone()
    one_off[0, 0] += 1.0
    return {"correct output": (expected, honest, None),
            "correct output, oracle given": (expected, honest, expected.double()),
            "one element off, oracle consulted": (expected, one_off, expected.double()),
            "every element off, oracle consulted": (expected, honest + 1.0, expected.double())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="another checkout of this repository")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=8192)
    args = ap.parse_args()
    sides = {"this checkout": _load(ROOT)}
    if args.against:
        sides = {Path(args.against).name: _load(Path(args.against)), **sides}
    data = cases(args.size)
    times: dict = {(c, s): [] for c in data for s in sides}
    verdicts: dict = {}
    for _ in range(args.rounds):
        for case, (e, a, o) in data.items():
            for side, module in sides.items():
                start = time.perf_counter()
                result = module.compare(e, a, 1e-4, 1e-4, 0, "normal", {"M": args.size, "N": args.size}, oracle=o)
                times[(case, side)].append(time.perf_counter() - start)
                verdicts.setdefault(case, set()).add((result[0], result[1]))
    print(f"\n### Judging one {args.size} x {args.size} fp32 output (seconds, median of {args.rounds}; "
          f"{torch.get_num_threads()} threads)\n")
    print("| case | " + " | ".join(sides) + " | same verdict |")
    print("|---|" + "---|" * len(sides) + "---|")
    for case in data:
        cells = " | ".join(f"{statistics.median(times[(case, side)]):.2f}" for side in sides)
        print(f"| {case} | {cells} | {len(verdicts[case]) == 1} |")


if __name__ == "__main__":
    main()
