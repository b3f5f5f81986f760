from environment.tasks.registry import GRADED_TASKS, get_task, list_tasks, load_kernelbench, registry
from environment.tasks.task import Task, TaskError

__all__ = ["GRADED_TASKS", "Task", "TaskError", "get_task", "list_tasks", "load_kernelbench", "registry"]
