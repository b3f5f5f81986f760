"""The one request and reply of an evaluation at every outer boundary: the API server's harness, the
backend (local pool or Ray actor), the zygote, the evaluator, and back.

Both are pydantic records validated by their receiver, like the inner protocol (protocol.py): the
evaluator validates the request it is forked for, the server validates the reply (a reply that does
not validate is the environment's failure, a crash, never the submission's). The zygote forwards the
request's bytes without decoding them (zygote.py), so only the evaluator ever holds a decoded one.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_jsonable_python

from environment.config import HarnessConfig
from environment.evaluation.evaluator.inputs import SeedPlan
from environment.evaluation.result import EvalResult, StaticResult
from environment.tasks.task import Task


class EvalRequest(BaseModel):
    """What the evaluator is given: the task (its fields, without its shipped solutions), the source, the
    per-evaluation seeds (never the secret they came from), the limits, stage 1's result, the backend.
    `id` and `nonce` are set by the backend that sends it; `workdir` by the zygote."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: dict[str, Any]
    source: str
    seeds: SeedPlan
    config: HarnessConfig
    static: StaticResult
    backend: Literal["cpu", "cuda"]
    id: str = ""
    nonce: str = ""
    workdir: str = ""

    @classmethod
    def of(cls, task: Task, source: str, seeds: dict, config: HarnessConfig, static: StaticResult,
           backend: str) -> "EvalRequest":
        fields = asdict(task)
        fields["reference_path"] = str(task.reference_path)
        fields["folder"] = str(task.folder) if task.folder else None
        fields.pop("solutions", None)
        return cls(task=to_jsonable_python(fields),  # as the evaluator receives it: tuples as lists
                   source=source, seeds=SeedPlan(**dict(seeds, trials=tuple(seeds["trials"]))),
                   config=config, static=static, backend=backend)

    def task_of(self) -> Task:
        """The Task rebuilt in the evaluator (paths and tuples put back; no shipped solutions)."""
        fields = dict(self.task)
        for key in ("reference_path", "folder"):
            if fields.get(key):
                fields[key] = Path(fields[key])
        fields["solutions"] = {}
        for key in ("cpu_shapes", "gpu_shapes", "distributions"):
            fields[key] = tuple(fields[key])
        return Task(**fields)


class EvalReply(BaseModel):
    """What comes back: the result, or why there is none (`timeout`: the submission ran out of time;
    `crash`: the environment failed). `notes` are the backend's (a retry after a lost worker); a Ray
    actor adds its name, node and time."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["result", "timeout", "crash"]
    result: Optional[EvalResult] = None
    error: str = ""
    notes: list[str] = []
    id: str = ""
    actor: str = ""
    node_id: str = ""
    actor_s: float = 0.0


def reply_of(data: Any) -> EvalReply:
    """The reply validated on receipt; one that does not validate is the environment's failure."""
    try:
        reply = EvalReply.model_validate(data)
    except ValidationError as exc:
        return EvalReply(kind="crash", error=f"the evaluation worker sent a malformed reply ({exc.errors()[0]['msg']} "
                                             f"at {'.'.join(map(str, exc.errors()[0]['loc']))})")
    if reply.kind == "result" and reply.result is None:
        return EvalReply(kind="crash", error="the evaluation worker sent a result reply without a result")
    return reply
