"""The task registry: shipped problems plus any KernelBench files a user points at.

``KERNEL_ENV_EXTRA_TASKS`` may name files or folders (os.pathsep-separated): a KernelBench
checkout (``level1/``, ``level2/``, ...), a task folder, or a folder of KernelBench-format files.
Files found there are loaded as KernelBench problems (tasks/kernelbench.py: sizes scaled to the
host, KernelBench's semantics); one that cannot be used is listed as unavailable with its reason
and nothing else is affected.
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

from environment.config import setting
from environment.tasks import generator
from environment.tasks.kernelbench import Unavailable, is_suite, load_problem, load_suite
from environment.tasks.task import Task, TaskError, load_task_folder, task_from_reference

PROBLEMS = Path(__file__).parent / "problems"
GRADED_TASKS = ("gelu_bias", "rmsnorm", "causal_attention")


def load_kernelbench(path: Path) -> list[Task]:
    """Tasks from a KernelBench-format file, a task folder, or a folder of either."""
    path = Path(path)
    if path.is_file():
        return [task_from_reference(path, {})]
    if not path.is_dir():
        raise TaskError(f"{path}: no such file or folder")
    if (path / "reference.py").is_file():
        return [load_task_folder(path)]
    tasks: list[Task] = []
    for child in sorted(path.iterdir()):
        if child.is_dir() and (child / "reference.py").is_file():
            tasks.append(load_task_folder(child))
        elif child.suffix == ".py" and not child.name.startswith("_"):
            tasks.append(task_from_reference(child, {}))
    return tasks


def _folder_task(folder: Path) -> Task | Unavailable:
    try:
        return load_task_folder(folder)
    except TaskError as exc:
        return Unavailable(id=folder.name, title=folder.name, difficulty="medium", path=folder, reason=str(exc))


def scan(path: Path) -> list[Task | Unavailable]:
    """Every problem under an extra path, each a Task or an Unavailable entry (never an exception)."""
    path = Path(path)
    if path.is_file():
        return [load_problem(path)]
    if not path.is_dir():
        return [Unavailable(id=str(path), title=path.name, difficulty="medium", path=path,
                            reason="no such file or folder (check KERNEL_ENV_EXTRA_TASKS)")]
    if (path / "reference.py").is_file():
        return [_folder_task(path)]
    if is_suite(path):
        return load_suite(path)
    found: list[Task | Unavailable] = []
    for child in sorted(path.iterdir()):
        if child.is_dir() and (child / "reference.py").is_file():
            found.append(_folder_task(child))
        elif child.suffix == ".py" and not child.name.startswith("_"):
            found.append(load_problem(child))
    return found


_loading = threading.Lock()


def catalog() -> tuple[dict[str, Task], tuple[Unavailable, ...]]:
    """(playable tasks by id, unavailable problems), loaded once (a KernelBench checkout takes
    tens of seconds: the server starts loading it at startup, callers wait for that one load)."""
    with _loading:
        return _catalog()


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, Task], tuple[Unavailable, ...]]:
    """Shipped tasks must load: their failure is a bug, raised."""
    found: list[Task | Unavailable] = list(load_kernelbench(PROBLEMS))
    for extra in filter(None, setting("KERNEL_ENV_EXTRA_TASKS").split(os.pathsep)):
        found.extend(scan(Path(extra)))
    by_id: dict[str, Task] = {}
    missing: list[Unavailable] = []
    for item in found:
        if isinstance(item, Unavailable):
            missing.append(item)
        elif item.id in by_id:
            missing.append(Unavailable(id=item.id, title=item.title, difficulty=item.difficulty,
                                       path=item.reference_path, reason=f"duplicate task id {item.id!r} (also "
                                       f"{by_id[item.id].reference_path}): rename one of the files"))
        else:
            by_id[item.id] = item
    order = {d: i for i, d in enumerate(("easy", "medium", "hard"))}
    tasks = dict(sorted(by_id.items(), key=lambda kv: (not kv[1].graded, order[kv[1].difficulty], kv[0])))
    return tasks, tuple(missing)


def registry() -> dict[str, Task]:
    return catalog()[0]


catalog.cache_clear = _catalog.cache_clear  # type: ignore[attr-defined]  # tests reload the extras
registry.cache_clear = _catalog.cache_clear  # type: ignore[attr-defined]


def unavailable() -> tuple[Unavailable, ...]:
    return catalog()[1]


def get_task(task_id: str) -> Task:
    if generator.is_generated(task_id):  # any seed of a generated family: built (and validated) on demand
        try:
            return generator.generate(task_id)
        except TaskError as exc:
            raise KeyError(str(exc)) from None
    tasks = registry()
    if task_id not in tasks:
        gone = next((u for u in unavailable() if u.id == task_id), None)
        if gone is not None:
            raise KeyError(f"task {task_id!r} is unavailable: {gone.reason}")
        raise KeyError(f"unknown task_id {task_id!r}; valid ids: {', '.join(tasks)}")
    return tasks[task_id]


def list_tasks(difficulty: Optional[str] = None) -> list[Task]:
    return [t for t in registry().values() if difficulty is None or t.difficulty == difficulty]


def task_ids(tasks: Iterable[Task]) -> list[str]:
    return [t.id for t in tasks]


def listing() -> list[dict]:
    """What GET /tasks and the playground list: every playable task, then one generated task per
    family and level (any other seed is playable too), then the problems that could not be loaded
    (``"available": false`` with the reason)."""
    return ([t.summary() for t in registry().values()] + generator.sample_summaries()
            + [u.summary() for u in unavailable()])
