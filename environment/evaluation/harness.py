"""evaluate(task, source, config) -> EvalResult: the one entry point of the harness.

Pure of episode state: the environment maps the result to an observation and the reward module
scores it. Candidate code never runs in this process.
"""
from __future__ import annotations

import os
import threading
from typing import Optional

from environment.config import HarnessConfig, ServerConfig, detect_backend, harness_config
from environment.evaluation.inputs import derive_seeds
from environment.evaluation.pool import EvaluatorPool, config_payload, task_payload
from environment.evaluation.result import EvalResult, LoadResult
from environment.evaluation.static_checks import check_source
from environment.evaluation.tf32_policy import with_tf32_decision
from environment.tasks.task import Task

# The server's secret: mixed into every trial seed, never sent to an evaluator process.
_SECRET = os.environ.get("KERNEL_ENV_SECRET", "").encode() or os.urandom(32)
_pool: Optional[EvaluatorPool] = None
_pool_lock = threading.Lock()


def pool() -> EvaluatorPool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = EvaluatorPool(ServerConfig().workers)
        return _pool


def backend() -> str:
    """cpu or cuda, without waiting for a worker (reset must answer at once)."""
    return detect_backend()


def evaluate(task: Task, source: str, config: Optional[HarnessConfig] = None, *, seed: int = 0,
             salt: str = "", session: str = "default", static_checks: bool = True) -> EvalResult:
    config = config or harness_config()
    static = check_source(source, task.reference_code)
    be = backend()
    if not static.ok and (static_checks or not static.flags):
        return EvalResult(task_id=task.id, backend=be, static=static, flags=static.flags)
    if not static_checks:  # test-only: let a flagged submission reach the sandbox layers
        static = static.model_copy(update={"ok": True, "errors": [], "flags": []})
    seeds = derive_seeds(_SECRET, seed, task.id, salt, config.trials + 1)
    task = with_tf32_decision(task)
    request = {"task": task_payload(task), "source": source, "seeds": seeds, "config": config_payload(config),
               "static": static.model_dump(mode="json"), "backend": be}
    response = pool().run(request, session, config.total_timeout_s)
    if response.get("kind") == "result":
        return EvalResult.model_validate(response["result"])
    reason = response.get("error", "unknown failure")
    from environment.evaluation import flags as F
    flags = list(static.flags) + ([F.TIMEOUT] if response.get("kind") == "timeout" else [])
    return EvalResult(task_id=task.id, backend=be, static=static,
                      load=LoadResult(ok=False, error=f"The evaluation did not complete: {reason}.",
                                      exit_reason=reason), flags=flags)
