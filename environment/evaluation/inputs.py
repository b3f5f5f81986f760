"""Trial inputs: the harness owns shapes, seeds and distributions (the candidate never picks them)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import torch

from environment.tasks.task import WIDE_SCALE, Task


@dataclass(frozen=True)
class Trial:
    index: int
    shape: dict[str, int]
    distribution: str
    seed: int


def derive_seeds(secret: bytes, public_seed: int, task_id: str, salt: str, n: int) -> list[int]:
    """Seeds for n trials from the server's secret and the public seed: reproducible for the
    server, unpredictable for a submission that knows only the public seed."""
    out = []
    for i in range(n):
        digest = hashlib.sha256(secret + f"|{public_seed}|{task_id}|{salt}|{i}".encode()).digest()
        out.append(int.from_bytes(digest[:7], "little"))
    return out


@dataclass(frozen=True)
class SeedPlan:
    """Every seed of one evaluation, each from its own label: no seed shares bits with another, so
    what the candidate can observe (its construction seed, its trial inputs, the inputs of the
    counted call) says nothing about another (the held-out inputs of the replay)."""
    trials: tuple[int, ...]
    init: int        # model construction, both children (the candidate knows it)
    counted: int     # inputs of the traced call (the candidate sees them)
    heldout: int     # inputs of the trusted replay (only the reference and the replayer see them)


def seed_plan(secret: bytes, public_seed: int, task_id: str, salt: str, trials: int) -> dict:
    """A SeedPlan as plain data for the request (SeedPlan(**plan) rebuilds it)."""
    def one(label: str) -> int:
        return derive_seeds(secret, public_seed, task_id, f"{salt}|{label}", 1)[0]
    return {"trials": derive_seeds(secret, public_seed, task_id, salt, trials), "init": one("init") % 2**31,
            "counted": one("counted"), "heldout": one("heldout")}


def plan_trials(task: Task, backend: str, seeds: list[int]) -> list[Trial]:
    """Cycle shapes and distributions so every shape and every distribution is exercised."""
    shapes = task.shapes(backend) or ({},)
    dists = task.distributions
    return [Trial(i, dict(shapes[i % len(shapes)]), dists[(i + i // len(shapes)) % len(dists)], s)
            for i, s in enumerate(seeds)]


def _planned_bytes(reference: Any) -> int | None:
    """Bytes get_inputs() would allocate, found on the meta device (nothing allocated); None when
    get_inputs does more than build tensors (numpy, an explicit device) and cannot be planned."""
    try:
        with torch.device("meta"):
            planned = list(reference.get_inputs())
    except Exception:
        return None
    return sum(t.numel() * t.element_size() for t in planned if isinstance(t, torch.Tensor))


def make_inputs(reference: Any, shape: dict[str, int], distribution: str, seed: int,
                cap_bytes: int | None = None) -> list[torch.Tensor]:
    """The trial inputs at `shape`. With cap_bytes, inputs larger than that are never allocated: a
    HarnessFault names the size and the knob (the task is too big for this evaluator, whatever the
    submission)."""
    for name, value in shape.items():
        setattr(reference, name, value)
    if cap_bytes is not None:
        planned = _planned_bytes(reference)
        if planned is not None and planned > cap_bytes:
            from environment.evaluation.outcome import HarnessFault
            raise HarnessFault(f"the task's inputs at shape {shape} need {planned / 2**20:.0f} MiB, over the "
                               f"evaluator's {cap_bytes / 2**20:.0f} MiB cap (KERNEL_ENV_MAX_INPUT_MB)")
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
