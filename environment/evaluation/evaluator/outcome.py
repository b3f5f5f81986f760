"""What a speed stage reads and what it returns: the stage never mutates the evaluation.

The evaluator builds a StageContext from its own state, calls the stage (measured: performance.py;
modeled: modeled_speed.py) and applies the StageOutcome it gets back to the result.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from environment.config import HarnessConfig
from environment.evaluation.evaluator.inputs import SeedPlan
from environment.evaluation.result import PerformanceResult, StaticResult
from environment.tasks.task import Task


@dataclass(frozen=True)
class StageContext:
    task: Task
    source: str
    static: StaticResult
    seeds: SeedPlan
    config: HarnessConfig
    backend: str
    workdir: str
    replayer: Any                        # the replayer's ChildHandle
    sampler: Any = None                  # the second replayer's (the GPU-shape replay runs there, beside it)


@dataclass
class StageOutcome:
    performance: PerformanceResult
    flags: list[str] = field(default_factory=list)
    wrong: Optional[str] = None          # a checked output of the stage was wrong: correctness fails with this
    triton_launches: Optional[int] = None  # Triton launches the trusted replay verified
    compute_s: float = 0.0               # time inside forward calls (child clocks), for the overhead ratio
    stage_s: dict[str, float] = field(default_factory=dict)  # the stage's own parts (trace, replay, compile)
