"""Evaluations shared by every test of one pytest run, across its xdist workers.

Several test files judge the same shipped solutions through the real harness: their verdict (test_tasks),
the winnable table (test_winnable), the red team's honest bar (test_redteam). Each (task, source, config,
seed, salt) is evaluated once per run, by whichever worker asks first; a worker asking for it meanwhile
waits on its lock and reads the result. The results live in the run's own temporary directory (pytest's
basetemp, or its parent under xdist, which the workers share), so no run ever reads another's.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, Optional

from environment.evaluation.harness import evaluate

_DIR: Optional[Path] = None


def share_in(basetemp: Path) -> None:
    """Called once per worker (tests/conftest.py) with the worker's pytest basetemp."""
    global _DIR
    _DIR = (basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp) / "shared-evaluations"
    _DIR.mkdir(parents=True, exist_ok=True)


def evaluated(task: Any, source: str, config: Any = None, **kwargs: Any):
    """harness.evaluate(task, source, config, **kwargs), evaluated once per run."""
    from environment.config import harness_config
    config = config or harness_config()
    if _DIR is None:   # outside pytest (a script importing a test helper): nothing to share with
        return evaluate(task, source, config, **kwargs)
    key = hashlib.sha256(repr((task.id, source, config, sorted(kwargs.items()))).encode()).hexdigest()[:32]
    path = _DIR / f"{key}.pickle"
    with open(_DIR / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        result = evaluate(task, source, config, **kwargs)
        tmp = path.with_suffix(".partial")
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(path)
        return result
