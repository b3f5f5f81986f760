"""Is TF32 admissible for a task's fp32 matmuls? Decided once per task, by running its reference.

On an H100 an fp32 `tl.dot` runs as TF32 by default (and `torch.backends.cuda.matmul.allow_tf32`
makes cuBLAS do the same). Whether that meets a task's contract depends on the task (its sizes,
its inputs, its tolerance), not on the tolerance alone: so the reference is run on the task's own
shapes and distributions twice, once exact and once with every matmul operand truncated to TF32
as Triton's default `tl.dot` does on sm_90 (gpu_numerics.tf32_truncate), and TF32 is admissible
when every output stays within the task's tolerance of the exact one. The answer is cached per
task (id, reference source, tolerance, shapes) in the server process and travels with the task
to the evaluator. A reference that runs no matmul gets None (the question does not arise).

This runs the task's trusted reference (never a submission) in the server process, as loading
the task already does.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
from typing import Any, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from environment.evaluation.child.gpu_numerics import tf32_truncate
from environment.tasks.task import Task

SEEDS = (0, 1)
INIT_SEED = 1234
_aten = torch.ops.aten
_MATMULS = {_aten.mm.default: (0, 1), _aten.bmm.default: (0, 1), _aten.addmm.default: (1, 2),
            _aten.baddbmm.default: (1, 2), _aten.addbmm.default: (1, 2)}
_SDPA_CPU = _aten._scaled_dot_product_flash_attention_for_cpu.default
_cache: dict[str, Optional[bool]] = {}
_lock = threading.Lock()


def _tf32(t: Any) -> Any:
    if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
        return torch.from_numpy(tf32_truncate(t.detach().contiguous().numpy())).reshape(t.shape)
    return t


class Tf32Matmuls(TorchDispatchMode):
    """Every fp32 matmul (mm, bmm, addmm, baddbmm, addbmm, fused CPU attention) with its operands
    truncated to TF32; counts the matmuls it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.matmuls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _MATMULS:
            self.matmuls += 1
            args = list(args)
            for i in _MATMULS[func]:
                args[i] = _tf32(args[i])
            return func(*args, **kwargs)
        if func is _SDPA_CPU:
            self.matmuls += 1
            return _attention(*args, **kwargs)
        return func(*args, **kwargs)


def _attention(q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    """The math of the fused CPU attention op, both products on TF32 operands."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.matmul(_tf32(q), _tf32(k).transpose(-2, -1)) * scale
    if is_causal:
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    lse = torch.logsumexp(scores, dim=-1)
    out = torch.matmul(_tf32(torch.exp(scores - lse[..., None])), _tf32(v))
    return out, lse


def _key(task: Task) -> str:
    text = repr((task.id, task.reference_code, task.atol, task.rtol, task.cpu_shapes, task.distributions,
                 task.extreme, task.hidden_shape))
    return hashlib.sha256(text.encode()).hexdigest()


def _decide(task: Task) -> Optional[bool]:
    from environment.evaluation.evaluator.inputs import hidden_shape, init_args, make_inputs

    reference = task.load_reference()
    shapes = list(task.cpu_shapes) + ([hidden_shape(task, SEEDS[0])] if task.hidden_shape else [])
    for shape in shapes:
        for dist in task.distributions:
            for seed in SEEDS:
                inputs = make_inputs(reference, shape, dist, seed, task.extreme)
                torch.manual_seed(INIT_SEED)
                model = reference.Model(*init_args(reference))
                with torch.no_grad():
                    exact = model(*inputs)
                    mode = Tf32Matmuls()
                    with mode:
                        rounded = model(*inputs)
                if not mode.matmuls:
                    return None  # no matmul in the reference: the question does not arise
                if not torch.allclose(rounded, exact, atol=task.atol, rtol=task.rtol, equal_nan=True):
                    return False
    return True


def tf32_admissible(task: Task) -> Optional[bool]:
    """True/False: TF32 matmuls do/do not meet the task's tolerance; None: the reference has no
    matmul (or could not be run this way), and the tolerance rule of modeled/precision.py applies."""
    key = _key(task)
    with _lock:
        if key not in _cache:
            try:
                _cache[key] = _decide(task)
            except Exception:  # a user's reference that cannot run this way: undecided, the tolerance rule applies
                _cache[key] = None
        return _cache[key]


def with_tf32_decision(task: Task) -> Task:
    """The task with its TF32 decision filled in (the harness calls this before an evaluation)."""
    if task.tf32_admissible is not None:
        return task
    return dataclasses.replace(task, tf32_admissible=tf32_admissible(task))
