"""KernelBench problem files as tasks: sizes scaled for a CPU host, KernelBench's own semantics,
metadata from the file, and every failure kept as a reason instead of an exception.

A KernelBench checkout (or any folder laid out like one: ``level1/``, ``level2/``, ... of problem
files) is scanned file by file; each file becomes a ``Task`` or an ``Unavailable`` entry naming why.
The task keeps the file untouched as its reference (that is what the agent reads and what the
children run); the harness sets the trial sizes as module globals (``Task.cpu_shapes``), and
``Task.gpu_shapes`` keeps KernelBench's own sizes, the GPU problem the modeled time speaks about.
"""
from __future__ import annotations

import ast
import re
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import torch

from environment.config import detect_backend
from environment.tasks import scaling
from environment.tasks.devices import model_device_error, on_host
from environment.tasks.task import Task

LEVEL_DIFFICULTY = {1: "easy", 2: "medium", 3: "hard"}
# KernelBench's correctness tolerance per precision (atol = rtol): fp32 1e-4, fp16/bf16 1e-2.
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-7}
LOAD_SEED = 0


@dataclass(frozen=True)
class Unavailable:
    """A problem file that could not become a task, and why (listed, never playable)."""
    id: str
    title: str
    difficulty: str
    path: Path
    reason: str

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "difficulty": self.difficulty, "graded": False,
                "available": False, "reason": self.reason}


def level_of(path: Path) -> Optional[int]:
    match = re.fullmatch(r"level_?(\d+)", path.parent.name, re.IGNORECASE)
    return int(match.group(1)) if match else None


def clean_name(path: Path) -> str:
    return path.stem.strip().rstrip("_").strip()


def problem_id(path: Path) -> str:
    level = level_of(path)
    return f"kernelbench/level{level}/{clean_name(path)}" if level else clean_name(path)


def title_of(path: Path) -> str:
    words = re.sub(r"^\d+_", "", clean_name(path)).replace("_", " ")
    return re.sub(r"\s+", " ", words).strip() or clean_name(path)


def _import(path: Path, source: str) -> types.ModuleType:
    module = types.ModuleType(f"_kernelbench_{abs(hash(str(path)))}")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def _operations(source: str, module: types.ModuleType) -> list[str]:
    """The operations of Model.forward in order: layers by their class, functions by their name."""
    tree = ast.parse(source)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return []
    layers: dict[str, str] = {}
    for node in ast.walk(model):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    func = node.value.func
                    layers[target.attr] = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    ops: list[str] = []
    for node in ast.walk(forward) if forward else []:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                name = layers.get(func.attr, func.attr)
            elif isinstance(func, ast.Attribute):
                name = func.attr
            else:
                name = getattr(func, "id", "")
            if name and name not in ops and name not in ("super", "size", "view", "reshape", "dim", "shape"):
                ops.append(name)
    return ops


def _describe(path: Path, level: Optional[int], ops: list[str], gpu: dict[str, int], cpu: dict[str, int],
              derived_text: str) -> str:
    where = f"KernelBench level {level}" if level else "A KernelBench-format problem"
    lines = [f"{where}: {title_of(path)}.",
             f"The reference computes: {', '.join(ops) if ops else 'see the code below'}."]
    if gpu != cpu:
        lines.append("KernelBench's own sizes (the GPU problem the modeled time is for): "
                     + ", ".join(f"{k}={v}" for k, v in gpu.items()) + ".")
        lines.append("This host runs the trials at interpreter-sized shapes: "
                     + ", ".join(f"{k}={v}" for k, v in cpu.items()) + "."
                     + (" A name like input_shape__0 is an element of the tuple global input_shape."
                        if any("__" in k for k in cpu) else "")
                     + (" Globals derived from these sizes follow them." if derived_text else ""))
    lines.append("Models run as KernelBench runs them: as constructed (training mode, so BatchNorm uses batch "
                 "statistics), Model and ModelNew built under the same seed.")
    return "\n".join(lines)


def _run_once(module: types.ModuleType, rng_seed: int) -> tuple[list[torch.Tensor], list[Any], float]:
    """(outputs, inputs, seconds of the forward): the model built and its inputs drawn under fixed
    seeds, the forward run (in training mode, as KernelBench runs it) after seeding `rng_seed`."""
    torch.manual_seed(LOAD_SEED)
    model = module.Model(*module.get_init_inputs())
    torch.manual_seed(LOAD_SEED + 1)
    inputs = list(module.get_inputs())
    torch.manual_seed(rng_seed)
    start = time.perf_counter()
    with torch.no_grad():
        out = model(*inputs)
    seconds = time.perf_counter() - start
    outs = [t for t in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(t, torch.Tensor)]
    return outs, inputs, seconds


def load_problem(path: Path, budget: scaling.Budget = scaling.Budget(),
                 backend: Optional[str] = None) -> Union[Task, Unavailable]:
    """A KernelBench file as a Task at CPU trial sizes, or Unavailable with the reason."""
    path = Path(path)
    level = level_of(path)
    difficulty = LEVEL_DIFFICULTY.get(level or 0, "medium")
    tid, title = problem_id(path), title_of(path)

    def refuse(reason: str) -> Unavailable:
        return Unavailable(id=tid, title=title, difficulty=difficulty, path=path, reason=reason)

    try:
        source = path.read_text()
        module = _import(path, source)
    except Exception as exc:  # a user's file: its failure is listed, nothing else is affected
        return refuse(f"importing it failed ({type(exc).__name__}: {str(exc)[:300]})")
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not callable(getattr(module, n, None))]
    if missing:
        return refuse(f"missing {', '.join(missing)}; a KernelBench file defines Model, get_inputs and get_init_inputs")
    device_error = model_device_error(source, backend or detect_backend())
    if device_error:
        return refuse(device_error)
    if "cuda" in source:
        on_host(module)
    state = torch.random.get_rng_state()
    try:
        sizes = scaling.find_sizes(source)
        try:
            scaling.apply(module, sizes.leaves, sizes.derived)
            scaling.meta_cost(module)
        except Exception as exc:
            return refuse(f"its inputs cannot be planned without allocating them (building them on the meta device "
                          f"raised {type(exc).__name__}: {str(exc)[:200]}); the evaluator would have no bound on "
                          "their memory")
        trial = scaling.choose_cpu_shape(module, sizes, budget, lambda m: _run_once(m, 1)[2])
        scaling.apply(module, trial, sizes.derived)
        first, inputs, _ = _run_once(module, 1)
        second, _, _ = _run_once(module, 2)
        if len(first) != len(second) or any(not torch.equal(a, b) for a, b in zip(first, second)):
            return refuse("its output changes from run to run on the same inputs (random ops such as Dropout in "
                          "training mode): no kernel can be checked against it")
        if not first:
            return refuse("forward returns no tensor")
    except scaling.ScalingError as exc:
        return refuse(f"it cannot be scaled to this host: {exc}")
    except Exception as exc:
        return refuse(f"the reference fails at its trial sizes ({type(exc).__name__}: {str(exc)[:300]})")
    finally:
        torch.random.set_rng_state(state)
    floats = [t.dtype for t in [*inputs, *first] if isinstance(t, torch.Tensor) and t.is_floating_point()]
    dtype = floats[0] if floats else torch.float32
    tol = TOLERANCE.get(dtype, 1e-4)
    gpu = {n: sizes.leaves[n] for n in sizes.scalable}
    cpu = {n: trial[n] for n in sizes.scalable}
    return Task(
        id=tid, title=title, difficulty=difficulty, graded=False,
        description=_describe(path, level, _operations(source, module), gpu, cpu, sizes.derived),
        reference_path=path, reference_code=source, dtype=str(dtype).replace("torch.", ""), atol=tol, rtol=tol,
        cpu_shapes=(cpu,), gpu_shapes=(gpu,), train_mode=True, derived=sizes.derived,
    )


def is_suite(path: Path) -> bool:
    """A KernelBench layout: a level folder, or a folder holding level folders."""
    path = Path(path)
    return path.is_dir() and (level_of(path / "x.py") is not None
                              or any(level_of(child / "x.py") for child in path.iterdir() if child.is_dir()))


def problem_files(path: Path) -> list[Path]:
    path = Path(path)
    folders = [path] if level_of(path / "x.py") else sorted(
        c for c in path.iterdir() if c.is_dir() and level_of(c / "x.py"))
    files = [f for folder in folders for f in folder.glob("*.py") if not f.name.startswith("_")]
    return sorted(files, key=lambda f: (level_of(f) or 0, int(m.group(1)) if (m := re.match(r"(\d+)_", f.name)) else 0,
                                        f.name))


def load_suite(path: Path, budget: scaling.Budget = scaling.Budget()) -> list[Union[Task, Unavailable]]:
    return [load_problem(f, budget) for f in problem_files(path)]


def reference_as_submission(source: str, wrong: bool = False) -> str:
    """The reference itself as a ModelNew (a subclass of the renamed reference class): what a
    correct submission of this problem returns. wrong: its outputs moved well past any tolerance
    (a wrong submission). For benchmarks and tests of the harness on any problem."""
    body = source.replace("super(Model, self)", "super(_Reference, self)").replace("class Model(", "class _Reference(")
    change = "[o + 0.05 * (1 + o.abs()) if o.is_floating_point() else o + 1 for o in outs]" if wrong else "outs"
    return body + f"""

class ModelNew(_Reference):
    def forward(self, *args):
        out = super().forward(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        outs = {change}
        return tuple(outs) if isinstance(out, (tuple, list)) else outs[0]
"""
