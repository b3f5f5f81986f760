"""Device strings in a reference: where inputs are built, and where the model may put tensors.

The evaluator builds every input on the host's CPU and moves it to the device itself, so a
``get_inputs`` that says ``.cuda()`` or ``device="cuda"`` is mapped to wherever the harness is
building (its default device: the CPU, or ``meta`` while it plans sizes). Inside ``Model`` a device
string cannot be mapped without changing the code the children run: on a CPU host such a file is
refused at load (``model_device_error``).
"""
from __future__ import annotations

import ast
import functools
import types
from typing import Any, Callable, Optional

import torch
from torch.overrides import TorchFunctionMode


def _is_accelerator(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, (str, int)) and not isinstance(device, bool) and (
        isinstance(device, int) or str(device).startswith("cuda"))


class HostDevice(TorchFunctionMode):
    """`.cuda()`, `.to("cuda")` and `device="cuda"` become the current default device."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "cuda" and args and isinstance(args[0], torch.Tensor):
            return args[0]
        if name == "to" and args and isinstance(args[0], torch.Tensor):
            rest = [a for a in args[1:] if not _is_accelerator(a)]
            if len(rest) != len(args) - 1 or _is_accelerator(kwargs.get("device")):
                kwargs.pop("device", None)
                args = (args[0], *rest)
                if not rest and not kwargs:
                    return args[0]
        if _is_accelerator(kwargs.get("device")):
            kwargs.pop("device")
        return func(*args, **kwargs)


def _mapped(fn: Callable[[], Any]) -> Callable[[], Any]:
    @functools.wraps(fn)
    def call() -> Any:
        with HostDevice():
            return fn()
    return call


def on_host(module: types.ModuleType) -> None:
    """Wrap the module's input builders so their device strings name the host's device."""
    for name in ("get_inputs", "get_init_inputs"):
        fn = module.__dict__.get(name)
        if callable(fn) and not getattr(fn, "__wrapped__", None):
            module.__dict__[name] = _mapped(fn)


def model_device_error(source: str, backend: str) -> Optional[str]:
    """Why the reference's Model cannot run on this host, or None: a CUDA device named inside it."""
    if backend == "cuda":
        return None
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for sub in ast.walk(node):
            cuda_call = isinstance(sub, ast.Attribute) and sub.attr == "cuda"
            cuda_text = isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.startswith("cuda")
            if cuda_call or cuda_text:
                return (f"class {node.name} puts tensors on the GPU (line {sub.lineno}: "
                        f"`{ast.unparse(sub)[:60]}`) and this host has no GPU: create them on the input's device "
                        "(device=x.device, torch.empty_like) or load this file on a CUDA host")
    return None
