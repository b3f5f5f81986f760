"""A task: a KernelBench-format reference plus metadata the harness owns (shapes, tolerance, inputs)."""
from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

DIFFICULTIES = ("easy", "medium", "hard")
DISTRIBUTIONS = ("normal", "wide", "extreme")
DEFAULT_DISTRIBUTIONS = ("normal", "wide")  # 'extreme' needs a family (task.yaml `extreme:`)
WIDE_SCALE = 4.0  # 'wide' multiplies floating inputs: larger magnitudes expose overflow and eps bugs
# Extreme-value families (environment/evaluation/evaluator/inputs.py draws them): what a kernel of that kind
# must survive on a GPU, e.g. logits large enough that exp overflows without the max subtraction.
EXTREME_FAMILIES = ("logits", "masked_logits", "rows", "elementwise", "attention")


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    difficulty: str
    graded: bool
    description: str
    reference_path: Path
    reference_code: str
    dtype: str = "float32"
    atol: float = 1e-5
    rtol: float = 1e-5
    cpu_shapes: tuple[dict[str, int], ...] = ()
    gpu_shapes: tuple[dict[str, int], ...] = ()
    model_shape: Optional[dict[str, int]] = None
    distributions: tuple[str, ...] = DEFAULT_DISTRIBUTIONS
    extreme: Optional[str] = None
    # Hidden trial shapes: per dimension a fixed size or an inclusive [low, high] range an odd size is
    # drawn from with the secret seed. Never shown to the agent.
    hidden_shape: Optional[dict[str, tuple[int, int]]] = None
    # Whether fp32 matmuls may run as TF32 under this task's tolerance (decided by running the
    # reference with TF32 operands, environment/evaluation/evaluator/tf32_policy.py); None: not decided yet.
    tf32_admissible: Optional[bool] = None
    init_seeded: bool = False
    # KernelBench semantics: models run as constructed (training mode: BatchNorm uses batch
    # statistics). Shipped tasks run in eval mode (none of them has a layer where it matters).
    train_mode: bool = False
    # Top-level assignments of the reference re-run after the harness sets a size, so globals
    # derived from sizes (bias_shape = (out_channels, 1, 1)) follow them (tasks/scaling.py).
    derived: str = ""
    folder: Optional[Path] = None
    solutions: dict[str, tuple[Path, ...]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "difficulty": self.difficulty, "graded": self.graded}

    def shapes(self, backend: str) -> tuple[dict[str, int], ...]:
        return (self.gpu_shapes or self.cpu_shapes) if backend == "cuda" else self.cpu_shapes

    def load_reference(self) -> types.ModuleType:
        """Import reference.py as a fresh private module (dims are module globals the harness sets)."""
        name = f"_kernel_env_reference_{self.id}"
        spec = importlib.util.spec_from_file_location(name, self.reference_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules.pop(name, None)
        return _as_reference(module, self.reference_code, self.derived)


def reference_module(code: str, derived: str = "") -> types.ModuleType:
    """The reference as Task.load_reference makes it, from its source text: what a trusted child
    (the reference's, the replayer) runs get_inputs from to make the GPU-shape inputs itself."""
    module = types.ModuleType("_kernel_env_reference")
    exec(compile(code, "<reference>", "exec"), module.__dict__)
    return _as_reference(module, code, derived)


def _as_reference(module: types.ModuleType, code: str, derived: str) -> types.ModuleType:
    if derived:
        from environment.tasks.scaling import Derived
        module.__class__ = Derived
        module.__dict__["__derived__"] = derived
    if "cuda" in code:
        from environment.tasks.devices import on_host
        on_host(module)
    return module


class TaskError(ValueError):
    """A task folder or file that cannot be used, with the reason and the fix."""


def _shape_list(raw: Any, where: str) -> tuple[dict[str, int], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise TaskError(f"{where}: shapes must be a list of mappings like [{{M: 127, N: 257}}]")
    return tuple({str(k): int(v) for k, v in s.items()} for s in raw)


def _hidden_shape(raw: Any, cpu_shapes: tuple[dict[str, int], ...], where: str) -> Optional[dict[str, tuple[int, int]]]:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: hidden_shape must be a mapping like {{M: [3, 9], N: [4097, 8191]}}")
    out: dict[str, tuple[int, int]] = {}
    for key, value in raw.items():
        low, high = (value, value) if isinstance(value, int) else tuple(value) if isinstance(value, list) and \
            len(value) == 2 else (None, None)
        if not isinstance(low, int) or not isinstance(high, int) or not 0 < low <= high:
            raise TaskError(f"{where}: hidden_shape.{key} must be a positive size or a [low, high] range")
        out[str(key)] = (low, high)
    if cpu_shapes and cpu_shapes[0] and set(out) != set(cpu_shapes[0]):
        raise TaskError(f"{where}: hidden_shape must give every dimension of cpu_shapes ({sorted(cpu_shapes[0])})")
    return out


def _module_dims(module: types.ModuleType) -> dict[str, int]:
    """Upper-case int globals of a KernelBench file are its problem dimensions."""
    return {k: v for k, v in vars(module).items() if k.isupper() and isinstance(v, int) and not isinstance(v, bool)}


def load_task_folder(folder: Path) -> Task:
    folder = Path(folder)
    meta_path, ref_path = folder / "task.yaml", folder / "reference.py"
    if not ref_path.is_file():
        raise TaskError(f"{folder}: no reference.py (a KernelBench file with Model, get_inputs, get_init_inputs)")
    meta = yaml.safe_load(meta_path.read_text()) if meta_path.is_file() else {}
    task = task_from_reference(ref_path, meta or {}, folder=folder)
    sol = folder / "solutions"
    solutions = {kind: tuple(sorted((sol / kind).glob("*.py"))) for kind in ("correct", "wrong") if (sol / kind).is_dir()}
    return Task(**{**task.__dict__, "solutions": solutions})


def task_from_reference(ref_path: Path, meta: dict[str, Any], folder: Optional[Path] = None) -> Task:
    """Build a Task from any KernelBench-format file; metadata fills in what the file cannot say."""
    ref_path = Path(ref_path)
    code = ref_path.read_text()
    task_id = str(meta.get("id") or ref_path.stem if folder is None else meta.get("id") or folder.name)
    probe = Task(id=task_id, title="", difficulty="medium", graded=False, description="",
                 reference_path=ref_path, reference_code=code)
    try:
        module = probe.load_reference()
    except Exception as exc:  # a user's file: report, do not crash the server
        raise TaskError(f"{ref_path}: importing it failed ({type(exc).__name__}: {exc})") from exc
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise TaskError(f"{ref_path}: missing {name}; a KernelBench file defines Model, get_inputs and get_init_inputs")
    difficulty = str(meta.get("difficulty", "medium"))
    if difficulty not in DIFFICULTIES:
        raise TaskError(f"{ref_path}: difficulty {difficulty!r} is not one of {DIFFICULTIES}")
    dists = tuple(meta.get("distributions") or DEFAULT_DISTRIBUTIONS)
    if not set(dists) <= set(DISTRIBUTIONS):
        raise TaskError(f"{ref_path}: distributions {dists} must be a subset of {DISTRIBUTIONS}")
    extreme = meta.get("extreme")
    if ("extreme" in dists) != (extreme is not None) or (extreme is not None and extreme not in EXTREME_FAMILIES):
        raise TaskError(f"{ref_path}: the 'extreme' distribution needs `extreme:` set to one of {EXTREME_FAMILIES} "
                        "(and `extreme:` needs 'extreme' in distributions)")
    tol = meta.get("tolerance") or {}
    dims = _module_dims(module)
    cpu_shapes = _shape_list(meta.get("cpu_shapes"), str(ref_path)) or ((dims,) if dims else ({},))
    model_shape = meta.get("model_shape")
    return Task(
        id=task_id,
        title=str(meta.get("title") or task_id.replace("_", " ")),
        difficulty=difficulty,
        graded=bool(meta.get("graded", False)),
        description=str(meta.get("description") or (module.__doc__ or "").strip()
                        or "Implement ModelNew, equivalent to the reference Model, faster."),
        reference_path=ref_path,
        reference_code=code,
        dtype=str(meta.get("dtype", "float32")),
        atol=float(tol.get("atol", 1e-4 if folder is None else 1e-5)),
        rtol=float(tol.get("rtol", 1e-4 if folder is None else 1e-5)),
        cpu_shapes=cpu_shapes,
        gpu_shapes=_shape_list(meta.get("gpu_shapes"), str(ref_path)),
        model_shape={str(k): int(v) for k, v in model_shape.items()} if model_shape else None,
        distributions=dists,
        extreme=extreme,
        hidden_shape=_hidden_shape(meta.get("hidden_shape"), cpu_shapes, str(ref_path)),
        init_seeded=bool(meta.get("init_seeded", False)),
        folder=folder,
    )
