"""Suite-wide settings: the Triton interpreter on CPU hosts, GPU-only tests skipped without CUDA."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede any import of triton

import pytest  # noqa: E402


def _has_cuda() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; this host has none")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
