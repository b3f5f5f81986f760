"""Trial inputs: the harness owns shapes, seeds and distributions (the candidate never picks them).

Distributions: `normal` (what get_inputs draws), `wide` (x4), and `extreme`, a family per kind of
task of what its kernels must survive on a GPU (see `_extreme`). Shapes: the task's listed shapes,
plus hidden ones drawn from the secret seed (task.yaml `hidden_shape`: odd sizes beyond every
listed and modeled size along the reduction dimensions, small elsewhere, so they stay cheap in the
interpreter). The agent is told hidden shapes exist, never which.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any, Optional

import torch

from environment.evaluation.faults import HarnessFault
from environment.tasks.task import WIDE_SCALE, Task

LOGIT_SCALE = 100.0      # |logits| up to ~400: exp overflows fp32 (at 88.7) unless the row max is subtracted
ELEMENTWISE_SCALE = 30.0  # |x| up to ~120: past exp's overflow point in either direction
ATTENTION_SCALE = 8.0    # q and k x8: scores of a few hundred, one key dominating each query
ROW_SHIFT = (3.0, 40.0)  # 'rows': each row's mean 3 to 40 of its spreads away from zero (log-uniform per row)


@dataclass(frozen=True)
class Trial:
    index: int
    shape: dict[str, int]
    distribution: str
    seed: int
    hidden: bool = False                 # a hidden shape: never named in feedback
    order_seed: Optional[int] = None     # the candidate runs each launch's programs in this secret order


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


def hidden_shape(task: Task, seed: int) -> dict[str, int]:
    """One hidden shape: each dimension fixed or an odd size drawn from its [low, high] range."""
    rng = random.Random(seed ^ 0x4D1DDE)
    shape = {}
    for name, (low, high) in sorted((task.hidden_shape or {}).items()):
        value = rng.randint(low, high)
        if value % 2 == 0 and low != high:
            value = value + 1 if value < high else value - 1
        shape[name] = value
    return shape


def plan_trials(task: Task, backend: str, seeds: list[int], hidden: int = 0, shuffled: int = 0) -> list[Trial]:
    """Cycle the listed shapes and the distributions so every one is exercised; the last `hidden`
    trials use hidden shapes (normal or wide inputs; extreme for a `rows` task), and `shuffled`
    trials from the second on run programs out of order (the first trial runs twice, in pid order,
    for the determinism check)."""
    shapes = task.shapes(backend) or ({},)
    dists = task.distributions
    n = len(seeds)
    n_hidden = min(hidden, n - 1) if task.hidden_shape else 0
    # Extreme inputs are dominated by a few entries per row, which would hide a lost row tail; the 'rows' family
    # makes one row in three so (the rest show it), and its long rows are where a one-pass variance fails: a
    # hidden shape of a `rows` task always draws it (a kernel exact only up to the listed rows' length passed)
    rows = task.extreme == "rows" and "extreme" in dists
    hidden_dists = ["extreme"] if rows else [d for d in dists if d != "extreme"] or list(dists)
    trials = []
    for i, s in enumerate(seeds):
        order = s ^ 0x0DE5 if 1 <= i <= shuffled else None
        if i >= n - n_hidden:
            trials.append(Trial(i, hidden_shape(task, s), hidden_dists[s % len(hidden_dists)], s, hidden=True,
                                order_seed=order))
        else:
            trials.append(Trial(i, dict(shapes[i % len(shapes)]), dists[(i + i // len(shapes)) % len(dists)], s,
                                order_seed=order))
    return trials


def _planned_bytes(reference: Any) -> int | None:
    """Bytes get_inputs() would allocate, found on the meta device (nothing allocated); None when
    get_inputs does more than build tensors (numpy, an explicit device) and cannot be planned."""
    try:
        with torch.device("meta"):
            planned = list(reference.get_inputs())
    except Exception:
        return None
    return sum(t.numel() * t.element_size() for t in planned if isinstance(t, torch.Tensor))


def _rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1]) if t.dim() >= 1 else t.reshape(1, 1)


def _logits(x: torch.Tensor, gen: torch.Generator, masked: bool) -> torch.Tensor:
    """Large logits; every other row with one dominant entry; masked: an eighth of the entries -inf
    (never a row's largest, so every row keeps a finite max)."""
    rows = _rows(x).clone() * LOGIT_SCALE
    n_rows, n = rows.shape
    top = torch.randint(0, n, (n_rows,), generator=gen)
    r = torch.arange(n_rows)
    boost = 20.0 + 30.0 * torch.rand(n_rows, generator=gen)
    rows[r, top] = torch.where(r % 2 == 0, rows.amax(dim=1) + boost, rows[r, top])
    if masked and n > 1:
        hide = torch.rand(rows.shape, generator=gen) < 0.125
        hide[r, rows.argmax(dim=1)] = False
        rows[hide] = float("-inf")
    return rows.reshape(x.shape)


def _row_scales(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Rows at magnitudes from 1e-3 to 1e3, each shifted 3 to 40 spreads away from zero (log-uniform
    per row), every third row with one dominant entry, and one all-zero row (eps and clamps). The
    shift is what a one-pass variance (E[x^2] - mean^2) cannot take in fp32 at a 1e-4 tolerance while
    a two-pass or chunked one can; spread over a range (not a band: a kernel exact only where a row
    sat 15 to 30 spreads out passed a band of 20 to 24) up to where honest two-pass kernels still
    hold (they fail at 100)."""
    rows = _rows(x).clone()
    n_rows, n = rows.shape
    scale = 10.0 ** (torch.rand(n_rows, 1, generator=gen) * 6.0 - 3.0)
    sign = torch.where(torch.rand(n_rows, 1, generator=gen) < 0.5, -1.0, 1.0)
    low, high = ROW_SHIFT
    shift = low * (high / low) ** torch.rand(n_rows, 1, generator=gen)
    rows = (rows + sign * shift) * scale
    r = torch.arange(n_rows)
    top = torch.randint(0, n, (n_rows,), generator=gen)
    rows[r, top] = torch.where(r % 3 == 2, rows[r, top] * 1000.0, rows[r, top])
    rows[int(torch.randint(0, n_rows, (1,), generator=gen))] = 0.0
    return rows.reshape(x.shape)


def _extreme(family: str, inputs: list[Any], seed: int) -> list[Any]:
    gen = torch.Generator().manual_seed(seed ^ 0xE7E7)
    floats = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    out = list(inputs)
    if not floats:
        return out
    first = floats[0]
    if family in ("logits", "masked_logits"):
        out[first] = _logits(out[first], gen, masked=family == "masked_logits")
    elif family == "rows":
        out[first] = _row_scales(out[first], gen)
    elif family == "elementwise":
        out[first] = out[first] * ELEMENTWISE_SCALE
    elif family == "attention":
        for i in floats[:2]:
            out[i] = out[i] * ATTENTION_SCALE
    else:
        raise ValueError(f"unknown extreme family {family!r}")
    return out


def make_inputs(reference: Any, shape: dict[str, int], distribution: str, seed: int,
                extreme: Optional[str] = None, cap_bytes: int | None = None) -> list[torch.Tensor]:
    """The trial inputs at `shape`. With cap_bytes, inputs larger than that are never allocated: a
    HarnessFault names the size and the knob (the task is too big for this evaluator, whatever the
    submission)."""
    for name, value in shape.items():
        setattr(reference, name, value)
    if cap_bytes is not None:
        planned = _planned_bytes(reference)
        if planned is not None and planned > cap_bytes:
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
    elif distribution == "extreme":
        if extreme is None:
            raise ValueError("the 'extreme' distribution needs the task's extreme family")
        inputs = _extreme(extreme, inputs, seed)
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


def planned_inputs(plan: Any) -> list[torch.Tensor]:
    """The inputs a protocol.InputPlan names, made where they are used (a trusted child): the
    reference's get_inputs at the plan's shape under its seed, as make_inputs makes them in the
    evaluator, on a fresh module built from the reference's source (dims as Task.load_reference)."""
    from environment.tasks.task import reference_module
    return make_inputs(reference_module(plan.code, plan.derived), plan.shape, "normal", plan.seed,
                       cap_bytes=plan.cap_bytes)


def geometry(tensors: list[torch.Tensor]) -> list[tuple[list[int], str]]:
    return [(list(t.shape), str(t.dtype).split(".")[-1]) for t in tensors]


# Elements per tensor a fingerprint reads (evenly spaced): inputs that are not a function of the seed
# (a get_inputs that draws from an unseeded generator) differ nearly everywhere.
FINGERPRINT_ITEMS = 1 << 16


def fingerprint(tensors: list[torch.Tensor]) -> str:
    """A digest of the inputs' geometry and of evenly spaced elements: the reference's child and the
    replayer each make the GPU-shape inputs, and the evaluator compares their fingerprints."""
    digest = hashlib.sha256(repr(geometry(tensors)).encode())
    for t in tensors:
        flat = t.detach().reshape(-1)
        step = max(1, flat.numel() // FINGERPRINT_ITEMS)
        sample = flat[::step].contiguous()
        digest.update((sample.view(torch.int16) if sample.dtype == torch.bfloat16 else sample).numpy().tobytes())
    return digest.hexdigest()
