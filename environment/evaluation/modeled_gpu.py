"""Modeled time at the task's GPU shape (CPU hosts): the plan, and the verdict on its replay.

The model-shape replay (modeled_bridge.py) proves on held-out inputs that the candidate's recorded
work computes the answer. This stage prices that work at a size a GPU runs:

1. The shape: of the task's `gpu_shapes`, the one with the fewest input bytes that fits the
   evaluator's input cap (bounded memory: every process holds at most one copy of its inputs,
   `torch.empty` pages are only committed when touched). None (model shape only) when the task
   has no GPU shape, none fits, or its inputs are not all tensors.
2. The candidate's host code runs at that shape on zero-filled inputs it allocates itself (no values
   are sent: they are never used); its trace gives each launch's grid and arguments.
3. The reference runs (and is counted, as at the model shape) in its own child on inputs of that
   shape drawn from a secret label, giving its cost and the expected outputs.
4. The replayer replays the GPU-shape trace on the same inputs, running per launch the corner
   programs, evenly spaced interior programs and interior programs drawn from the secret sampling
   seed (replay/sampled.py), and scales their counts to the grid.
5. Here: the positions the executed programs wrote must equal the reference's (else
   `size_dependent`: host code that computes something else at the large shape earns nothing);
   the estimate is only used when the sample is trustworthy (no launch read memory that unsampled
   programs were to write, no check program outside the estimate's range, every output checked
   somewhere, the launches write at least the output bytes). Otherwise the model-shape speedup
   stands and the note says why.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Optional

import torch

from environment.evaluation import flags as F
from environment.evaluation.compare import compare
from environment.evaluation.inputs import _planned_bytes, json_init, make_inputs


@dataclass
class GpuPlan:
    shape: dict[str, int]
    geometry: list[tuple[list[int], str]]
    inputs: list[torch.Tensor]
    init: list[Any]
    sample_seed: int


def _label(seed: int, label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{label}|{seed}".encode()).digest()[:8], "little") >> 1


def choose_shape(task: Any, reference: Any, cap_bytes: int) -> tuple[Optional[dict[str, int]], str]:
    """(shape, "") or (None, why the modeled time stays at the model shape)."""
    if not task.gpu_shapes:
        return None, "the task names no GPU shape"
    sized = []
    for i, shape in enumerate(task.gpu_shapes):
        for name, value in shape.items():
            setattr(reference, name, value)
        planned = _planned_bytes(reference)
        if planned is not None and planned <= cap_bytes:
            sized.append((planned, i, shape))
    if not sized:
        return None, "no GPU shape's inputs fit the evaluator's input cap"
    return min(sized)[2], ""


def plan(task: Any, reference: Any, cap_bytes: int, heldout_seed: int,
         model_shape: dict[str, int]) -> tuple[Optional[GpuPlan], str]:
    """The GPU-shape run's inputs and seeds (the reference module's dimensions are left at the model shape)."""
    shape, why = choose_shape(task, reference, cap_bytes)
    try:
        if shape is None:
            return None, why
        for name, value in shape.items():
            setattr(reference, name, value)
        with torch.device("meta"):
            planned = list(reference.get_inputs())
        if not all(isinstance(t, torch.Tensor) for t in planned):
            return None, "the task's inputs are not all tensors"
        geometry = [(list(t.shape), str(t.dtype).split(".")[-1]) for t in planned]
        inputs = make_inputs(reference, shape, "normal", _label(heldout_seed, "gpu-inputs"), cap_bytes=cap_bytes)
        return GpuPlan(shape=shape, geometry=geometry, inputs=inputs, init=json_init(reference),
                       sample_seed=_label(heldout_seed, "gpu-sample")), ""
    finally:
        for name, value in model_shape.items():
            setattr(reference, name, value)


def usable_trace(traced: Any, rebuilt: Any) -> str:
    """Why the GPU-shape trace cannot be replayed ("" when it can)."""
    if not traced.ok:
        return f"forward failed at the GPU shape ({(traced.error or '')[:300]})"
    trace = traced.trace
    if trace is None or trace.unreplayable:
        return f"the GPU-shape call cannot be replayed ({trace.unreplayable if trace else 'no trace'})"
    if trace.host_reads:
        return "forward reads values back to the host"
    missing = {s.kernel for s in trace.steps if s.kind == "triton"} - set(rebuilt.kernels)
    if missing:
        return f"kernel {sorted(missing)[0]} is not among the rebuilt kernels"
    return ""


def judge(ctx: Any, head: Any, checked: list[torch.Tensor], expected: list[torch.Tensor]) -> tuple[Optional[str], str]:
    """(flag or None, why the GPU-shape estimate cannot be used) — ("", "") when it can."""
    if head.sampled_error:
        return None, f"its replay failed ({head.sampled_error[:300]})"
    report = head.sampled_report or {}
    if report.get("tainted_launches"):
        return None, (f"launch {report['tainted_launches'][0]} reads memory that unsampled programs write "
                      "(a pipeline of launches is priced at the model shape)")
    outliers = [r["name"] for r in report.get("launches", []) if r.get("sample_outliers")]
    if outliers:
        return None, f"programs of {outliers[0]} do different amounts of work than the sample's estimate assumes"
    if len(checked) != 2 * len(expected):
        return None, f"the replay returned {len(checked) // 2} output(s), the reference {len(expected)}"
    for k, want in enumerate(expected):
        index, values = checked[2 * k], checked[2 * k + 1]
        if index.numel() == 0:
            return None, f"no sampled program wrote output {k}"
        if index.dtype != torch.int64 or int(index.max()) >= want.numel() or int(index.min()) < 0:
            return None, f"output {k} does not have the reference's shape"
        got = want.flatten()[index]
        err, _, _ = compare(got, values, ctx.task.atol, ctx.task.rtol, -1, "normal", {})
        if err:
            return F.SIZE_DEPENDENT, (f"at the GPU shape the sampled programs compute a wrong result ({err}): host "
                                      "code must launch the same computation at every size")
    written = sum(r.get("bytes_written", r["bytes_unique"]) for r in report.get("launches", []))
    output_bytes = sum(t.numel() * t.element_size() for t in expected)
    if written < output_bytes:
        return None, "the launches write fewer bytes than the outputs hold"
    return None, ""
