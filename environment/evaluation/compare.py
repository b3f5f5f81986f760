"""NaN/Inf-aware comparison that reports the first mismatching indices (as kernelbot does).

With a float64 run of the reference (the oracle), an element also passes when it is within the
task's tolerance of the oracle, widened by the fp32 reference's own error on that row (times
`slack`): where the fp32 reference is itself off (large or cancelling inputs), a kernel that is
closer to the true value is not failed for disagreeing with it. The task's tolerance stays the
contract; the oracle only decides who is right when the fp32 reference is not.
"""
from __future__ import annotations

from typing import Optional

import torch

from environment.evaluation.result import Mismatch


def _row_error(expected: torch.Tensor, oracle: torch.Tensor) -> torch.Tensor:
    """|fp32 reference - float64 reference|, maximised over the last dimension (a row shares its
    reductions, so its elements share their error), where both are finite; 0 elsewhere."""
    err = (expected - oracle).abs()
    err = torch.where(torch.isfinite(err), err, torch.zeros_like(err))
    return err.amax(dim=-1, keepdim=True).expand_as(err) if err.dim() >= 1 and err.shape[-1] else err


def compare(expected: torch.Tensor, actual: torch.Tensor, atol: float, rtol: float, trial: int,
            distribution: str, shape: dict[str, int], first: int = 5, oracle: Optional[torch.Tensor] = None,
            slack: float = 2.0, hidden: bool = False) -> tuple[Optional[str], float, Optional[Mismatch]]:
    """Return (error or None, max_abs_error vs the fp32 reference, mismatch details).
    hidden: the trial's shape is secret; it is not named."""
    where_shape = "a hidden shape" if hidden else f"shape {shape}"
    if actual.shape != expected.shape:
        return (f"output shape {tuple(actual.shape)} != expected {tuple(expected.shape)} on trial {trial} "
                f"({where_shape}): return a tensor with the reference's shape", float("inf"), None)
    if actual.dtype != expected.dtype:
        return (f"output dtype {actual.dtype} != expected {expected.dtype}: compute and return "
                f"{expected.dtype} (a precision downgrade is not allowed)", float("inf"), None)
    e, a = expected.double(), actual.double()
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    diff = (a - e).abs()
    if oracle is not None and oracle.shape == expected.shape and not bool(close.all()):
        o = oracle.double()
        to_oracle = (a - o).abs()
        bound = atol + rtol * o.abs() + slack * _row_error(e, o)
        close |= torch.isfinite(a) & torch.isfinite(o) & (to_oracle <= bound)
        diff = torch.where(torch.isfinite(to_oracle), torch.minimum(diff, to_oracle), diff)
    both_finite = torch.isfinite(a) & torch.isfinite(e)
    finite_diff = diff[both_finite]
    max_abs = float(finite_diff.max()) if finite_diff.numel() else 0.0
    mean_abs = float(finite_diff.mean()) if finite_diff.numel() else 0.0
    if bool(close.all()):
        return None, max_abs, None
    if bool((~both_finite & ~close).any()):
        max_abs = float("inf")
    bad = (~close).nonzero()[:first]
    idx = [list(map(int, row)) for row in bad.tolist()]
    mismatch = Mismatch(
        trial=trial, distribution=distribution, shape={} if hidden else shape, indices=idx,
        expected=[float(e[tuple(i)]) for i in idx], actual=[float(a[tuple(i)]) for i in idx],
        max_abs_error=max_abs, mean_abs_error=mean_abs, mismatched=int((~close).sum()), total=close.numel())
    where = ", ".join(f"{tuple(i)}: got {float(a[tuple(i)]):.6g}, expected {float(e[tuple(i)]):.6g}" for i in idx[:3])
    return (f"{mismatch.mismatched}/{mismatch.total} elements outside atol={atol:g}, rtol={rtol:g} on trial {trial} "
            f"({distribution} inputs, {where_shape}); first at {where}", max_abs, mismatch)
