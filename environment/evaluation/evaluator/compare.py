"""NaN/Inf-aware comparison that reports the first mismatching indices (as kernelbot does).

With a float64 run of the reference (the oracle), an element also passes when it is within the
task's tolerance of the oracle, widened by the fp32 reference's own error on that row (times
`slack`): where the fp32 reference is itself off (large or cancelling inputs), a kernel that is
closer to the true value is not failed for disagreeing with it. The task's tolerance stays the
contract; the oracle only decides who is right when the fp32 reference is not.

The elementwise test is scale-blind where outputs are small next to `atol` (a softmax over 400k
classes is ~2.5e-6 per element, under an atol of 1e-4: output * 1.01 passed). So every output must
also be close *as a whole*: its relative error norm ||out - ref|| / ||ref|| at most `rtol` (plus a
one epsilon of its dtype), or, with the oracle, ||out - oracle|| within `rtol` of the
oracle's norm plus `slack` times the fp32 reference's own error norm. A systematic scale or shift
error fails it at any output size; an honest reordering (errors of a few ulps) is far inside it.
"""
from __future__ import annotations

from typing import Optional

import torch

from environment.evaluation.result import Mismatch


def _row_error(expected: torch.Tensor, oracle: torch.Tensor) -> torch.Tensor:
    """|fp32 reference - float64 reference|, maximised over the last dimension (a row shares its
    reductions, so its elements share their error), where both are finite; 0 elsewhere. One value per
    row (last dimension kept as 1), broadcast where it is used."""
    err = (expected - oracle).abs_()
    err.masked_fill_(~torch.isfinite(err), 0.0)
    return err.amax(dim=-1, keepdim=True) if err.dim() >= 1 and err.shape[-1] else err


# rounding allowed on top of rtol in the norm test, in units of the output dtype's epsilon: one (an honest
# half-precision output is about half an epsilon off as a whole; 4 let a bf16 softmax times 1.04 pass at rtol 1e-2)
NORM_ULPS = 1.0


def _norm(x: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(x)) if x.numel() else 0.0


def _finite_pair(e: torch.Tensor, a: torch.Tensor, diff: torch.Tensor, float64_inputs: bool) -> Optional[torch.Tensor]:
    """Where a and e (float64 copies) are both finite, or None where that is everywhere (the common case: no
    masked copies of a large output). diff = |a - e| in float64 is finite exactly there, unless the inputs
    were float64 themselves (their difference can overflow)."""
    finite = (torch.isfinite(a) & torch.isfinite(e)) if float64_inputs else torch.isfinite(diff)
    return None if bool(finite.all()) else finite


def _isclose(a: torch.Tensor, e: torch.Tensor, diff: torch.Tensor, diff_finite: bool, rtol: float,
             atol: float) -> torch.Tensor:
    """torch.isclose(a, e, rtol, atol, equal_nan=True) as ATen defines it (TensorCompare.cpp: equal, or both NaN, or
    a finite |a - e| within atol + |rtol e|), reusing |a - e| and skipping what an all-finite pair cannot need
    (`diff_finite`: every |a - e| is finite, so neither side holds a NaN)."""
    close = a == e
    if not diff_finite:
        close |= a.isnan() & e.isnan()
    if rtol == 0 and atol == 0:
        return close
    allowed = (e * rtol).abs_().add_(atol)
    within = diff <= allowed
    return close.logical_or_(within if diff_finite else within.logical_and_(torch.isfinite(diff)))


def _masked(x: torch.Tensor, finite: Optional[torch.Tensor]) -> torch.Tensor:
    return x if finite is None else x[finite]


def norm_excess(expected: torch.Tensor, actual: torch.Tensor, rtol: float, oracle: Optional[torch.Tensor] = None,
                slack: float = 2.0, _pair: Optional[tuple] = None) -> Optional[tuple[float, float]]:
    """(relative error norm, its bound) when the output is not close as a whole, else None. Over the
    elements where every operand is finite (non-finite ones are the elementwise test's). `_pair`: compare()'s
    float64 copies, |a - e| and where both are finite (None: everywhere), so a large output is not converted
    and masked again."""
    if not (expected.is_floating_point() and actual.is_floating_point()) or actual.shape != expected.shape:
        return None
    bound = rtol + NORM_ULPS * torch.finfo(expected.dtype).eps
    if _pair is None:
        e, a = expected.double(), actual.double()
        diff = (a - e).abs()
        finite = torch.isfinite(a) & torch.isfinite(e)
        finite = None if bool(finite.all()) else finite
    else:
        e, a, diff, finite = _pair
    use_oracle = oracle is not None and oracle.shape == expected.shape
    if use_oracle:
        o = oracle.double()
        if not bool(torch.isfinite(o).all()):
            finite = torch.isfinite(o) if finite is None else finite & torch.isfinite(o)
    err, scale = _norm(_masked(diff, finite)), _norm(_masked(e, finite))
    if err <= bound * scale:
        return None
    if use_oracle:
        own = _norm(_masked(e - o, finite))
        if _norm(_masked(a - o, finite)) <= bound * _norm(_masked(o, finite)) + slack * own:
            return None
    return (err / scale if scale else float("inf")), bound


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
    diff = own_diff = (a - e).abs()
    float64_inputs = expected.dtype == torch.float64
    finite = _finite_pair(e, a, own_diff, float64_inputs)   # None: both finite everywhere
    close = _isclose(a, e, own_diff, finite is None and not float64_inputs, rtol, atol)
    if oracle is not None and oracle.shape == expected.shape and not bool(close.all()):
        o = oracle.double()
        to_oracle = (a - o).abs_()
        bound = o.abs().mul_(rtol).add_(atol).add_(slack * _row_error(e, o))   # atol + rtol |o| + slack row error
        close |= torch.isfinite(a) & torch.isfinite(o) & (to_oracle <= bound)
        diff = torch.where(torch.isfinite(to_oracle), torch.minimum(diff, to_oracle), diff)
    finite_diff = _masked(diff, finite)
    max_abs = float(finite_diff.max()) if finite_diff.numel() else 0.0
    mean_abs = float(finite_diff.mean()) if finite_diff.numel() else 0.0
    if bool(close.all()):
        excess = norm_excess(expected, actual, rtol, oracle, slack, _pair=(e, a, own_diff, finite))
        if excess is None:
            return None, max_abs, None
        return _off_as_a_whole(e, a, excess, atol, trial, distribution, shape, where_shape, hidden, first,
                               max_abs, mean_abs)
    if finite is not None and bool((~finite & ~close).any()):
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


def _off_as_a_whole(e: torch.Tensor, a: torch.Tensor, excess: tuple[float, float], atol: float, trial: int,
                    distribution: str, shape: dict, where_shape: str, hidden: bool, first: int, max_abs: float,
                    mean_abs: float) -> tuple[str, float, Mismatch]:
    """Every element within the tolerance, the output as a whole not: the elements off the most."""
    rel, bound = excess
    gap = torch.where(torch.isfinite(a - e), (a - e).abs(), torch.zeros_like(e)).flatten()
    top = torch.topk(gap, min(first, gap.numel())).indices
    idx = [list(map(int, torch.unravel_index(i, e.shape))) if e.dim() else [] for i in top]
    mismatch = Mismatch(
        trial=trial, distribution=distribution, shape={} if hidden else shape, indices=idx,
        expected=[float(e[tuple(i)]) for i in idx], actual=[float(a[tuple(i)]) for i in idx],
        max_abs_error=max_abs, mean_abs_error=mean_abs, mismatched=e.numel(), total=e.numel())
    return (f"the output is off by {rel:.3g} of its magnitude as a whole on trial {trial} ({distribution} inputs, "
            f"{where_shape}): ||out - ref|| / ||ref|| must be at most {bound:.3g} (rtol plus rounding), though each "
            f"element is within atol={atol:g}; a systematic scale or shift error hides under an absolute tolerance "
            "only where outputs are small: compute the exact function", max_abs, mismatch)
