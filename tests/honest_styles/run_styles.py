"""Evaluate honest-style kernels over seeds: python tests/honest_styles/run_styles.py FILE [seeds...]."""
import os
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "1")
from pathlib import Path

from environment import reward
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

path = Path(sys.argv[1])
seeds = [int(s) for s in sys.argv[2:]] or [0, 1, 2]
task = get_task(path.stem.split("__")[0])
for seed in seeds:
    t0 = time.time()
    r = evaluate(task, path.read_text(), seed=seed)
    p = r.performance
    print(f"{path.stem} seed={seed} correct={r.correct} score={reward.score(r)[0]:.3f} "
          f"speedup={p and p.speedup} kind={p and p.speedup_kind} flags={list(r.flags)} t={time.time()-t0:.0f}s\n"
          f"   note={p and p.note}\n   error={(r.load and r.load.error) or (r.correctness and r.correctness.error)!s:.600}",
          flush=True)
