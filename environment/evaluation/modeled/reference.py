"""Modeled time of the reference (trusted code, run in the evaluator process)."""
from __future__ import annotations

import torch

from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.modeled.model import model_cost
from environment.evaluation.result import ModeledCost


def reference_cost(model: torch.nn.Module, inputs: list, spec: dict, tolerance: dict | None) -> ModeledCost:
    """Count one forward call of the reference as aten launches and model it on `spec`.

    `tolerance` ({atol, rtol}) is the task's: fp32 matmuls are modeled as TF32 when it admits TF32.
    """
    counter = CostCounter()
    with torch.no_grad(), counter:
        model(*inputs)
    return model_cost(counter.launch_records(), spec, tolerance)
