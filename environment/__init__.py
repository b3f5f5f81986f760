"""kernel_env: an OpenEnv environment for GPU kernel optimization.

Exports are lazy: the harness processes import `environment.evaluation` without paying for the
OpenEnv client (and Gradio behind it).
"""
from __future__ import annotations

__all__ = ["KernelAction", "KernelEnv", "KernelObservation", "KernelState"]


def __getattr__(name: str):
    if name == "KernelEnv":
        from environment.client import KernelEnv
        return KernelEnv
    if name in ("KernelAction", "KernelObservation", "KernelState"):
        from environment import models
        return getattr(models, name)
    raise AttributeError(f"module 'environment' has no attribute {name!r}")
