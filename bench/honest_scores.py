"""Every shipped correct solution and every tests/honest_styles file, evaluated once (seed 0, default settings):
the check that a reward change keeps each honest file's score. Save a run, change the reward, compare.

    PYTHONPATH=. python bench/honest_scores.py --save before.json
    PYTHONPATH=. python bench/honest_scores.py --against before.json   # prints every file whose score or flags moved

Each line: file, score, credited speedup, model-shape and GPU-shape speedups, flags. The secret is this process's
(KERNEL_ENV_SECRET picks one): an honest file scores the same under every secret, so a file that moves between two
runs under different secrets is itself a finding.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parents[1]


def honest_files() -> list[tuple[str, Path]]:
    """(task id, file) of every shipped correct solution and every honest-style file."""
    shipped = sorted(ROOT.glob("environment/tasks/problems/*/solutions/correct/*.py"))
    styles = sorted(ROOT.glob("tests/honest_styles/**/*__*.py"))
    return [(p.parts[-4], p) for p in shipped] + [(p.stem.split("__")[0], p) for p in styles]


def main() -> int:
    from environment import reward
    from environment.evaluation.harness import evaluate
    from environment.tasks import get_task
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", help="write the scores to this JSON file")
    parser.add_argument("--against", help="a saved run: print the files whose score or flags differ from it")
    args = parser.parse_args()
    scores = {}
    for task_id, path in honest_files():
        try:
            task = get_task(task_id)
        except KeyError:
            continue
        r = evaluate(task, path.read_text(), seed=0)
        p = r.performance
        scores[str(path.relative_to(ROOT))] = row = [round(reward.score(r)[0], 4), p and p.speedup,
                                                     p and p.model_shape_speedup, p and p.gpu_shape_speedup,
                                                     list(r.flags)]
        print(path.relative_to(ROOT), row, flush=True)
    if args.save:
        Path(args.save).write_text(json.dumps(scores, indent=1))
    if not args.against:
        return 0
    before = json.loads(Path(args.against).read_text())
    moved = [(name, before.get(name), row) for name, row in scores.items()
             if name not in before or abs(before[name][0] - row[0]) > 1e-6 or before[name][4] != row[4]]
    print(f"\n{len(moved)} of {len(scores)} files moved against {args.against}")
    for name, old, new in moved:
        print(f"  {name}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
