"""Where evaluations run (dispatch): the evaluation backend interface and its choice by configuration.

The local warm zygote pool (pool.py) is the default. With KERNEL_ENV_RAY_ADDRESS set, the Ray
backend (ray_backend.py, `pip install .[ray]`) sends each request to an actor that hosts the same
pool on its node. Either way the request carries per-evaluation seeds only: the trial secret stays
in the API server.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from environment.config import RayConfig, detect_backend

if TYPE_CHECKING:
    from environment.evaluation.transport.request import EvalReply, EvalRequest


class EvaluationBackend(Protocol):
    def run(self, request: EvalRequest, session: str, timeout_s: float) -> EvalReply:
        """One evaluation (request.py: the one typed request and reply; harness.evaluate reads the reply)."""

    def describe(self) -> dict[str, Any]:
        """Backend, sandbox layers and workers (what GET /sandbox answers)."""

    def close(self) -> None:
        """Stop what this server started."""


def backend_kind() -> str:
    """cpu or cuda without contacting any worker (reset must answer at once)."""
    ray = RayConfig()
    return ray.backend if ray.address else detect_backend()


def make_backend(workers: int) -> EvaluationBackend:
    ray = RayConfig()
    if ray.address:
        from environment.evaluation.transport.ray_backend import RayBackend
        return RayBackend(ray)
    from environment.evaluation.transport.pool import EvaluatorPool
    return EvaluatorPool(workers)
