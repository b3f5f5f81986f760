"""Procedural tasks: seeded op-chain problems across families, with a difficulty knob.

Task ids are ``gen/<family>/<level>/<seed>`` (level 1-5), so anyone can replay one: the same id
gives the same reference on every host. The level sets the ops in the chain (level + 1), the op
classes (1: arithmetic and ReLU; 2: transcendental; 3: broadcast rows, causal masks, a second
stage), irregular (odd) sizes from level 2, float16 at level 5 (not attention), hidden odd shapes
from level 3, and the target speedup named in the prompt. Task.difficulty: levels 1-2 easy,
3 medium, 4-5 hard.

Every generated task validates itself before it is handed out (``validate``): the reference runs
at its sizes on normal and wide inputs with finite outputs, the output is not constant, and it
changes when any one input changes. A draw that fails is redrawn from the next sub-seed.
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import torch

from environment.config import setting
from environment.tasks.generator.ops import FAMILIES, LEVELS, Draw, draw, source
from environment.tasks.task import WIDE_SCALE, Task, TaskError

ID = re.compile(r"gen/([a-z_]+)/([1-9])/(\d{1,9})")
ATTEMPTS = 8
TOLERANCE = {"float32": 1e-4, "float16": 1e-2}  # KernelBench's per-precision tolerance


def task_id(family: str, level: int, seed: int) -> str:
    return f"gen/{family}/{level}/{seed}"


def is_generated(task_id_: str) -> bool:
    return task_id_.startswith("gen/")


def difficulty_of(level: int) -> str:
    return "easy" if level <= 2 else "medium" if level == 3 else "hard"


def title_of(family: str, level: int, seed: int) -> str:
    return f"{family.replace('_', ' ')} L{level} #{seed}"


def target_speedup(level: int) -> float:
    return round(1.0 + 0.25 * (level - 1), 2)


def _folder() -> Path:
    folder = Path(setting("KERNEL_ENV_GENERATED_DIR") or Path(tempfile.gettempdir()) / "kernel_env_generated")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _module(code: str, path: Path):
    module = type(torch)("_generated")
    module.__file__ = str(path)
    exec(compile(code, str(path), "exec"), module.__dict__)
    return module


def validate(code: str, path: Path) -> None:
    """Raise TaskError unless the reference is usable: finite on normal and wide inputs, not
    constant, dependent on every input."""
    module = _module(code, path)
    model = module.Model()
    gen_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(0)
        inputs = module.get_inputs()
    finally:
        torch.random.set_rng_state(gen_state)
    with torch.no_grad():
        base = model(*inputs).double()
        wide = model(*[t * WIDE_SCALE for t in inputs]).double()
        if not (torch.isfinite(base).all() and torch.isfinite(wide).all()):
            raise TaskError("the output is not finite on normal or wide inputs")
        if base.numel() > 1 and float(base.std()) < 1e-6 * (1 + float(base.abs().mean())):
            raise TaskError("the output is constant")
        for i, x in enumerate(inputs):
            changed = list(inputs)
            changed[i] = x + torch.randn(x.shape, generator=torch.Generator().manual_seed(i)).to(x.dtype)
            if torch.allclose(model(*changed).double(), base, atol=1e-3, rtol=1e-3):
                raise TaskError(f"the output does not depend on input {i}")


def _describe(d: Draw, level: int) -> str:
    names = ", ".join(n for n, _ in d.inputs)
    return (f"Generated {d.family.replace('_', ' ')} problem, level {level} of {max(LEVELS)}: "
            f"{' -> '.join(d.ops)} over inputs {names} ({d.dtype}). Target: a speedup of "
            f"{target_speedup(level)}x over the reference.")


@lru_cache(maxsize=512)
def generate(task_id_: str) -> Task:
    """The task of a generated id; TaskError names the fix for an id that is not one."""
    match = ID.fullmatch(task_id_)
    if not match or match.group(1) not in FAMILIES or int(match.group(2)) not in LEVELS:
        raise TaskError(f"{task_id_!r} is not a generated task id: use gen/<family>/<level>/<seed> with family one of "
                        f"{', '.join(FAMILIES)}, level 1-{max(LEVELS)}, seed a non-negative integer "
                        "(e.g. gen/elementwise/2/7)")
    family, level, seed = match.group(1), int(match.group(2)), int(match.group(3))
    errors = []
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"{family}/{level}/{seed}/{attempt}")
        d = draw(family, level, rng)
        doc = _describe(d, level)
        code = source(d, doc)
        path = _folder() / f"{task_id_.replace('/', '_')}_{hashlib.sha256(code.encode()).hexdigest()[:12]}.py"
        try:
            validate(code, path)
        except TaskError as exc:
            errors.append(str(exc))
            continue
        if not path.exists():
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(code)
            os.replace(tmp, path)
        hidden = {k: (v, 2 * v + 1) for k, v in d.sizes.items()} if level >= 3 else None
        if hidden and family == "attention":
            hidden = {**hidden, "B": (d.sizes["B"],) * 2, "H": (d.sizes["H"],) * 2, "D": (d.sizes["D"],) * 2}
        tol = TOLERANCE[d.dtype]
        return Task(id=task_id_, title=title_of(family, level, seed), difficulty=difficulty_of(level),
                    graded=False, description=doc, reference_path=path, reference_code=code, dtype=d.dtype,
                    atol=tol, rtol=tol, cpu_shapes=(dict(d.sizes),),
                    gpu_shapes=({k: (v if k in ("B", "H", "D") else v * 16) for k, v in d.sizes.items()},),
                    hidden_shape=hidden, train_mode=True)
    raise TaskError(f"{task_id_}: no valid draw in {ATTEMPTS} attempts ({'; '.join(errors[:3])}); try another seed")


def sample_summaries(seed: int = 0) -> list[dict]:
    """The summary of each of samples() without building them (the id says everything listed)."""
    return [{"id": task_id(f, level, seed), "title": title_of(f, level, seed),
             "difficulty": difficulty_of(level), "graded": False} for f in FAMILIES for level in LEVELS]


def samples(seed: int = 0) -> list[Task]:
    """One generated task per family and level (what GET /tasks lists; any other seed is playable too)."""
    return [generate(task_id(f, level, seed)) for f in FAMILIES for level in LEVELS]


__all__ = ["FAMILIES", "LEVELS", "generate", "is_generated", "sample_summaries", "samples", "target_speedup", "task_id", "validate"]
