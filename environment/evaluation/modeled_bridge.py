"""Modeled speed on CPU hosts: counts from the candidate child, costs and gates on the trusted side."""
from __future__ import annotations

from typing import Any

from environment.evaluation import flags as F
from environment.evaluation.result import PerformanceResult


def modeled_performance(ev: Any, reference: Any, cand: Any, ref: Any) -> PerformanceResult:
    ev.flags.append(F.MODELED_UNAVAILABLE)
    return PerformanceResult(note="Modeled GPU time is not available on this host; no speed credit.")
