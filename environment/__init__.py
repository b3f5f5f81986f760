"""kernel_env: an OpenEnv environment for GPU kernel optimization."""
from environment.client import KernelEnv
from environment.models import KernelAction, KernelObservation, KernelState

__all__ = ["KernelAction", "KernelEnv", "KernelObservation", "KernelState"]
