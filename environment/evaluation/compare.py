"""NaN/Inf-aware comparison that reports the first mismatching indices (as kernelbot does)."""
from __future__ import annotations

from typing import Optional

import torch

from environment.evaluation.result import Mismatch


def compare(expected: torch.Tensor, actual: torch.Tensor, atol: float, rtol: float, trial: int,
            distribution: str, shape: dict[str, int], first: int = 5) -> tuple[Optional[str], float, Optional[Mismatch]]:
    """Return (error or None, max_abs_error, mismatch details)."""
    if actual.shape != expected.shape:
        return (f"output shape {tuple(actual.shape)} != expected {tuple(expected.shape)} on trial {trial}: "
                "return a tensor with the reference's shape", float("inf"), None)
    if actual.dtype != expected.dtype:
        return (f"output dtype {actual.dtype} != expected {expected.dtype}: compute and return "
                f"{expected.dtype} (a precision downgrade is not allowed)", float("inf"), None)
    e, a = expected.double(), actual.double()
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    diff = (a - e).abs()
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
        trial=trial, distribution=distribution, shape=shape, indices=idx,
        expected=[float(e[tuple(i)]) for i in idx], actual=[float(a[tuple(i)]) for i in idx],
        max_abs_error=max_abs, mean_abs_error=mean_abs, mismatched=int((~close).sum()), total=close.numel())
    where = ", ".join(f"{tuple(i)}: got {float(a[tuple(i)]):.6g}, expected {float(e[tuple(i)]):.6g}" for i in idx[:3])
    return (f"{mismatch.mismatched}/{mismatch.total} elements outside atol={atol:g}, rtol={rtol:g} on trial {trial} "
            f"({distribution} inputs, shape {shape}); first at {where}", max_abs, mismatch)
