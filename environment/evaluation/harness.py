"""evaluate(task, source, config) -> EvalResult: the one entry point of the harness.

Pure of episode state: the environment maps the result to an observation and the reward module
scores it. Candidate code never runs in this process.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Optional

from environment.config import HarnessConfig, ServerConfig, harness_config, setting
from environment.evaluation.static.backends import unsupported_here
from environment.evaluation.transport.dispatch import EvaluationBackend, backend_kind, make_backend
from environment.evaluation.transport.request import EvalRequest
from environment.evaluation.evaluator.inputs import seed_plan
from environment.evaluation.result import EvalResult, LoadResult
from environment.evaluation.static.checks import check_source
from environment.evaluation.evaluator.tf32_policy import with_tf32_decision
from environment.tasks.task import Task

# The server's secret: mixed into every trial seed, never sent to an evaluator process.
_SECRET = setting("KERNEL_ENV_SECRET").encode() or os.urandom(32)
_pool: Optional[EvaluationBackend] = None  # the local pool, or Ray with KERNEL_ENV_RAY_ADDRESS
log = logging.getLogger("kernel_env.harness")
_pool_lock = threading.Lock()


def pool() -> EvaluationBackend:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = make_backend(ServerConfig().workers)
        return _pool


def backend() -> str:
    """cpu or cuda, without waiting for a worker (reset must answer at once)."""
    return backend_kind()


def evaluate(task: Task, source: str, config: Optional[HarnessConfig] = None, *, seed: int = 0,
             salt: str = "", session: str = "default", static_checks: bool = True) -> EvalResult:
    config = config or harness_config()
    static = check_source(source, task.reference_code)
    be = backend()
    unsupported = unsupported_here(source, be)
    if unsupported:  # another kernel language: not run, a turn spent and no credit (never the environment's
        # failure: a null reward here would let any submission dodge its score by naming cupy in dead code)
        log.info("task %s (session %s): %s", task.id, session, unsupported)
        from environment.evaluation import flags as F
        return EvalResult(task_id=task.id, backend=be, static=static, outcome="submission_failed",
                          load=LoadResult(ok=False, error=unsupported, exit_reason="not run: unsupported language"),
                          flags=list(static.flags) + [F.UNSUPPORTED_LANGUAGE])
    if not static.ok and (static_checks or not static.flags):
        return EvalResult(task_id=task.id, backend=be, static=static, flags=static.flags, outcome="submission_failed")
    if not static_checks:  # test-only: let a flagged submission reach the sandbox layers
        static = static.model_copy(update={"ok": True, "errors": [], "flags": []})
    seeds = seed_plan(_SECRET, seed, task.id, salt, config.trials)
    task = with_tf32_decision(task)
    reply = pool().run(EvalRequest.of(task, source, seeds, config, static, be), session, config.total_timeout_s)
    if reply.kind == "result":  # with the backend's notes (a retry after a lost worker) added
        result = reply.result.model_copy(update={"notes": list(reply.result.notes) + reply.notes})
    elif reply.kind == "timeout":  # per-command deadlines bound the children: the submission was slow
        reason = reply.error or "the evaluation ran out of time"
        from environment.evaluation import flags as F
        result = EvalResult(task_id=task.id, backend=be, static=static, outcome="submission_failed",
                            load=LoadResult(ok=False, error=f"The evaluation did not complete: {reason}.",
                                            exit_reason=reason), flags=list(static.flags) + [F.TIMEOUT])
    else:  # the evaluator or its worker died: the environment's failure, never the submission's score
        result = EvalResult(task_id=task.id, backend=be, static=static, outcome="harness_error",
                            harness_error=reply.error or "the evaluation worker failed")
    if result.outcome == "harness_error":
        log.error("harness error on task %s (session %s): %s", task.id, session, result.harness_error)
    return result
