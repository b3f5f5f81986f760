"""KernelEnv: the typed WebSocket client of kernel_env (OpenEnv's EnvClient)."""
from __future__ import annotations

from typing import Any, Dict

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from environment.models import KernelAction, KernelObservation, KernelState


class KernelEnv(EnvClient[KernelAction, KernelObservation, KernelState]):
    """Play kernel_env episodes over ``/ws``.

    >>> with KernelEnv(base_url="http://127.0.0.1:8000").sync() as env:
    ...     obs = env.reset(task_id="gelu_bias", seed=0).observation
    ...     result = env.step(KernelAction(code=my_source))
    """

    def _step_payload(self, action: KernelAction) -> Dict[str, Any]:
        return {"code": action.code, "finish": action.finish}

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[KernelObservation]:
        fields = dict(payload.get("observation") or {})
        fields.pop("reward", None)
        fields.pop("done", None)
        known = KernelObservation.model_fields
        obs = KernelObservation(
            **{k: v for k, v in fields.items() if k in known},
            done=bool(payload.get("done", False)),
            reward=payload.get("reward"),
        )
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: Dict[str, Any]) -> KernelState:
        known = KernelState.model_fields
        return KernelState(**{k: v for k, v in payload.items() if k in known})
