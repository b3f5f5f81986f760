"""Shared helpers: load task files as modules and count one call."""
import importlib.util
from pathlib import Path

import torch

from environment.evaluation.modeled.counting import CostCounter

ROOT = Path(__file__).resolve().parents[4]
GELU = ROOT / "environment" / "tasks" / "problems" / "gelu_bias"
GELU_TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"modeled_test_{path.stem}_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def count(fn, *inputs):
    """(output, report) of one counted call."""
    counter = CostCounter()
    with torch.no_grad(), counter:
        out = fn(*inputs)
    return out, counter.report(outputs=[out])
