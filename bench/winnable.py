"""Is every task winnable? Per task, the reference submitted unchanged (as ModelNew) and each shipped
correct Triton solution, evaluated with the default settings (seed 0) and scored by the reward.

    PYTHONPATH=. python bench/winnable.py [task ...]        # Markdown table, one row per task

A task is won when its best Triton solution scores above the reference copy.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")


def triton_solutions(task) -> list:
    return [p for p in task.solutions.get("correct", ()) if "@triton.jit" in p.read_text()]


def score_of(task, source: str, evaluate=None) -> tuple[float, float | None, list[str]]:
    """(score, speedup, flags) of one evaluation at seed 0 (by `evaluate`: harness.evaluate unless given)."""
    from environment import reward
    if evaluate is None:
        from environment.evaluation.harness import evaluate
    result = evaluate(task, source, seed=0)
    perf = result.performance
    return reward.score(result)[0], (perf.speedup if perf else None), list(result.flags)


def table(task_ids: list[str]) -> list[dict]:
    from bench.gpu_rank import reference_as_submission
    from environment.tasks import get_task, list_tasks
    rows = []
    print("| task | reference copy | best Triton | its speedup | solution | won |")
    print("|---|---|---|---|---|---|")
    for listed in list_tasks():
        if task_ids and listed.id not in task_ids:
            continue
        task = get_task(listed.id)
        ref, _, _ = score_of(task, reference_as_submission(task))
        best = max(((*score_of(task, p.read_text()), p.stem) for p in triton_solutions(task)),
                   key=lambda r: r[0], default=(0.0, None, [], "none"))
        row = {"task": task.id, "reference": ref, "triton": best[0], "speedup": best[1], "flags": best[2],
               "solution": best[3], "won": best[0] > ref}
        rows.append(row)
        speed = f"{row['speedup']:.3g}x" if row["speedup"] else "n/a"
        print(f"| {task.id} | {ref:.3f} | {best[0]:.3f} | {speed} | {best[3]} {' '.join(best[2])} | "
              f"{'yes' if row['won'] else 'no'} |", flush=True)
    print(f"\nWon: {sum(r['won'] for r in rows)} of {len(rows)} tasks.")
    return rows


if __name__ == "__main__":
    table(sys.argv[1:])
