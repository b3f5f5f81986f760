"""What a modeled price may be credited: a cost record only when it is physically possible, the lower of the two
shapes' speedups when both are priced, and no GPU-shape price where none could change the reward."""
from __future__ import annotations

import math
from typing import Optional

from environment.evaluation.result import ModeledCost


def validate_cost(cost: ModeledCost, output_bytes: int, spec: dict) -> Optional[str]:
    """Why a cost cannot be credited, or None. Defence in depth: the records come from trusted
    counting, but a number is only used when it is physically possible."""
    overhead = float(spec["launch_overhead_us"])
    if not cost.launches:
        return "the replay launched nothing"
    for launch in cost.launches:
        numbers = [launch.time_us, launch.bytes_unique, launch.bytes_sectors, *launch.flops.values()]
        if not all(math.isfinite(v) and v >= 0 for v in numbers):
            return f"launch {launch.name} has a negative or non-finite count"
        if launch.time_us < overhead:
            return f"launch {launch.name} is modeled below the launch overhead"
    if sum(launch.bytes_unique for launch in cost.launches) < output_bytes:
        return "the launches move fewer bytes than the outputs hold"
    if not math.isfinite(cost.time_us) or cost.time_us < overhead * len(cost.launches):
        return "the total time is below the launch overheads"
    return None


def credited_speedup(model_shape: Optional[float], gpu_shape: Optional[float]) -> Optional[float]:
    """The speedup the reward uses when both shapes are priced: the lower of the two.

    The model-shape price comes from a replay that runs every program of every launch on held-out
    inputs; the GPU-shape price scales a sample of programs to the grid, and every attacker round on
    it found a way to make unsampled programs do less than the sample shows (a96-a115). Taking the
    lower makes that whole class worthless by construction: a kernel that games the sample earns at
    most its fully replayed price, while a kernel that is worse at the GPU shape (strided loads, tiles
    re-read per program, a grid too small to fill the GPU) is priced down at its real weight."""
    if model_shape is None or gpu_shape is None:
        return None
    return min(model_shape, gpu_shape)


def not_worth_pricing(report: dict, reference: dict, spec: dict, tolerance: dict, shape: dict) -> str:
    """Why the GPU-shape price cannot change the reward ("" when it can). The credit is the lower of the
    two prices, and the reward pays no speed at or below its floor; the model-shape speedup before the
    sm_90 compile's occupancy and spill terms (which only ever add time) bounds the final one from
    above. So a kernel already at the floor there keeps a speed reward of 0 whatever the GPU shape says
    (and its warnings there, size_dependent among them, only ever take speed credit away): its price is
    not worth a second of the evaluation. A training run's many slow kernels end here."""
    from environment.evaluation.modeled.model import model_cost, modeled_speedup
    from environment.config import SPEEDUP_FLOOR
    try:
        bound = modeled_speedup(model_cost(reference["launches"], spec, tolerance, shape),
                                model_cost(report["launches"], spec, tolerance, shape), spec)
    except (KeyError, TypeError, ValueError):  # judged, with its own message, where the price is made
        return ""
    if bound is not None and bound <= SPEEDUP_FLOOR:
        return (f"the model-shape speedup ({bound:.3g}x before occupancy and spills) is at or below the reward's "
                f"floor ({SPEEDUP_FLOOR:g}x), where no price changes the score")
    return ""
