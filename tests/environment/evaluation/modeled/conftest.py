"""The Triton interpreter must be chosen before triton is first imported."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import pytest


@pytest.fixture
def sampled_line_grids(monkeypatch):
    """Line grids sampled, never run whole (sampled.rest_of_line): for tests of the sample's own estimate, coverage and
    dependency closure, whose small grids (a 206-program gelu, 203 row programs) would otherwise run whole."""
    from environment.evaluation.replay import sampled
    monkeypatch.setattr(sampled, "EXACT_LINE", 0)
