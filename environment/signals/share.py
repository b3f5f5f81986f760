"""Own-kernel share: the part of the modeled candidate time spent in the candidate's own Triton
kernels rather than library (aten) calls (Dr.Kernel's guard against "lazy optimisation").

value: own-kernel time / total modeled time. Verdict: disagree when the main verdict credits a
speedup of at least CREDITED_SPEEDUP while under LAZY_SHARE of the time is the candidate's own, i.e. a
"speedup" made of library calls (the reference's own tools); agree otherwise (a plain PyTorch
rewrite at parity is honest, and earns parity credit only); abstain without modeled launches.
"""
from __future__ import annotations

from environment.evaluation.result import EvalResult, Signal

NAME = "own_kernel_share"
LAZY_SHARE = 0.05
CREDITED_SPEEDUP = 1.1


def signal(result: EvalResult) -> Signal:
    p = result.performance
    cost = p.modeled_candidate if p is not None else None
    if cost is None or not cost.launches or cost.time_us <= 0:
        return Signal(name=NAME, verdict="abstain", why="no modeled launches to split")
    own = sum(launch.time_us for launch in cost.launches if not launch.name.startswith("aten."))
    total = sum(launch.time_us for launch in cost.launches) or cost.time_us
    share = own / total
    library = sorted({launch.name for launch in cost.launches if launch.name.startswith("aten.")})
    why = f"{share:.0%} of the modeled time in the submission's own kernels" + \
          (f"; library calls: {', '.join(library[:4])}" if library else "")
    credited = result.correct and p.speedup is not None and p.speedup >= CREDITED_SPEEDUP
    if credited and share < LAZY_SHARE:
        return Signal(name=NAME, verdict="disagree", value=round(share, 4),
                      why=f"a {p.speedup:.2f}x speedup made of library calls: {why}")
    return Signal(name=NAME, verdict="agree", value=round(share, 4), why=why)
