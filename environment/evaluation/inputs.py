"""Trial inputs: the harness owns shapes, seeds and distributions (the candidate never picks them)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Optional

import torch

from environment.tasks.task import WIDE_SCALE, Task


@dataclass(frozen=True)
class Trial:
    index: int
    shape: dict[str, int]
    distribution: str
    seed: int
    order_seed: Optional[int] = None     # the candidate runs each launch's programs in this secret order


def derive_seeds(secret: bytes, public_seed: int, task_id: str, salt: str, n: int) -> list[int]:
    """Seeds for n trials from the server's secret and the public seed: reproducible for the
    server, unpredictable for a submission that knows only the public seed."""
    out = []
    for i in range(n):
        digest = hashlib.sha256(secret + f"|{public_seed}|{task_id}|{salt}|{i}".encode()).digest()
        out.append(int.from_bytes(digest[:7], "little"))
    return out


def plan_trials(task: Task, backend: str, seeds: list[int], shuffled: int = 0) -> list[Trial]:
    """Cycle shapes and distributions so every shape and every distribution is exercised;
    `shuffled` trials from the second on run programs out of order (the first trial runs twice,
    in pid order, for the determinism check)."""
    shapes = task.shapes(backend) or ({},)
    dists = task.distributions
    return [Trial(i, dict(shapes[i % len(shapes)]), dists[(i + i // len(shapes)) % len(dists)], s,
                  order_seed=s ^ 0x0DE5 if 1 <= i <= shuffled else None)
            for i, s in enumerate(seeds)]


def make_inputs(reference: Any, shape: dict[str, int], distribution: str, seed: int) -> list[torch.Tensor]:
    for name, value in shape.items():
        setattr(reference, name, value)
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        inputs = list(reference.get_inputs())
    finally:
        torch.random.set_rng_state(gen_state)
    if distribution == "wide":
        inputs = [t * WIDE_SCALE if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    return [t.contiguous() if isinstance(t, torch.Tensor) else torch.tensor(t) for t in inputs]


def init_args(reference: Any) -> list[Any]:
    """Constructor arguments; must be plain JSON-able values or tensors (sent to both children)."""
    return list(reference.get_init_inputs())


def json_init(reference: Any) -> Any:
    """Constructor arguments for the current dimensions when they are plain JSON values (the
    children build one model per distinct value); None keeps the evaluation's first arguments."""
    args = init_args(reference)
    ok = all(isinstance(a, (int, float, bool, str)) or a is None for a in args)
    return args if ok else None
