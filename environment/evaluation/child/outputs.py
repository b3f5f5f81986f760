"""What forward returned, told apart by exact type alone (no method of the result is called).

Three kinds: plain tensors (the answer); plain values that run no code when read (a Python number from
``.item()``, a numpy array from ``.numpy()``, a list from ``.tolist()``, None, a dict of tensors): a
beginner's wrong answer, scored as one, with a message that names what came back; and anything else (a
tensor subclass, a lazy stand-in whose methods run code when read, red team a14/a15/a151): flagged
``output_not_plain_tensor``. Only an exact built-in or numpy type counts as a plain value: a subclass of
float or of ndarray can run code and stays a stand-in. Neither a wrong answer nor a stand-in is ever read
again (no digest, no fetch), so the split scores nothing the stand-in could use.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

import torch

_BUILTIN = {float: "a Python float (from .item()?)", int: "a Python int (from .item()?)",
            bool: "a Python bool", complex: "a Python complex", str: "a Python str", bytes: "a Python bytes",
            type(None): "None (no return statement?)"}
_CONTAINERS = {list: "a list", tuple: "a tuple", dict: "a dict"}
_SCAN = 64  # elements of a container looked at: a stand-in hidden further on is still never read


def _numpy_kind(value: Any) -> Optional[str]:
    np = sys.modules.get("numpy")  # torch imports numpy where it is installed; never imported here
    if np is None:
        return None
    if type(value) is np.ndarray:
        return "a numpy array (from .numpy()?)"
    if type(value) in set(np.sctypeDict.values()):
        return f"a numpy {type(value).__name__} scalar (from .numpy() or .item()?)"
    return None


def plain_value(value: Any, depth: int = 0) -> Optional[str]:
    """A description of `value` if it is a plain value that runs no code when read (a Python or numpy value, or a
    container of exact type list/tuple/dict holding such values or plain tensors), else None."""
    kind = _BUILTIN.get(type(value)) or _numpy_kind(value)
    if kind is not None:
        return kind
    if type(value) is torch.Tensor and depth > 0:  # inside a dict or a nested list: never read either
        return "a torch.Tensor"
    container = _CONTAINERS.get(type(value))
    if container is None or depth >= 3:
        return None
    items = list(value.values()) if type(value) is dict else value
    inner = [plain_value(v, depth + 1) for v in items[:_SCAN]]
    if any(k is None for k in inner):
        return None
    held = f" holding {inner[0].split(' (')[0]}" if inner else " (empty)"
    hint = " (from .tolist()?)" if type(value) is list and inner and "Python" in inner[0] else \
        " (return the tensor itself, or a tuple of tensors)" if inner and "torch.Tensor" in inner[0] else ""
    return f"{container}{held}{hint}"


def classify(out: Any) -> tuple[list, bool, Optional[str]]:
    """(items, plain, returned): items are forward's outputs (a top-level tuple or list unpacked); plain when
    every one is a plain torch.Tensor with storage; else `returned` names what came back when it is a plain
    value holding no tensor (a wrong answer), and is None for a tensor-like stand-in (a hack)."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    if all(type(t) is torch.Tensor for t in items):
        return items, all(t.untyped_storage().nbytes() >= 0 and not t.is_meta for t in items), None
    others = [(k, t) for k, t in enumerate(items) if type(t) is not torch.Tensor]
    kinds = [plain_value(t) for _, t in others]
    if any(k is None for k in kinds):
        return items, False, None
    if len(others) == len(items) and type(out) in (tuple, list):
        return items, False, plain_value(out)  # .tolist(), or a tuple of numbers
    where = f" as output {others[0][0] + 1}" if len(items) > 1 else ""
    return items, False, kinds[0] + where


def wrong_output_message(returned: str) -> str:
    return (f"forward returned {returned}: return a torch.Tensor (the result, on the inputs' device, with the "
            "reference's shape and dtype), not a Python or numpy value")
