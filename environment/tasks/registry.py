"""The task registry: shipped problems plus any KernelBench files a user points at.

``KERNEL_ENV_EXTRA_TASKS`` may name files or folders (os.pathsep-separated); each ``.py`` file in a
folder that is a KernelBench problem (Model, get_inputs, get_init_inputs) becomes a task.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

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


@lru_cache(maxsize=1)
def registry() -> dict[str, Task]:
    tasks = load_kernelbench(PROBLEMS)
    for extra in filter(None, os.environ.get("KERNEL_ENV_EXTRA_TASKS", "").split(os.pathsep)):
        tasks.extend(load_kernelbench(Path(extra)))
    by_id: dict[str, Task] = {}
    for task in tasks:
        if task.id in by_id:
            raise TaskError(f"duplicate task id {task.id!r} ({task.reference_path} and {by_id[task.id].reference_path})")
        by_id[task.id] = task
    order = {d: i for i, d in enumerate(("easy", "medium", "hard"))}
    return dict(sorted(by_id.items(), key=lambda kv: (not kv[1].graded, order[kv[1].difficulty], kv[0])))


def get_task(task_id: str) -> Task:
    tasks = registry()
    if task_id not in tasks:
        raise KeyError(f"unknown task_id {task_id!r}; valid ids: {', '.join(tasks)}")
    return tasks[task_id]


def list_tasks(difficulty: Optional[str] = None) -> list[Task]:
    return [t for t in registry().values() if difficulty is None or t.difficulty == difficulty]


def task_ids(tasks: Iterable[Task]) -> list[str]:
    return [t.id for t in tasks]
