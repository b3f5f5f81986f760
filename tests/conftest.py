"""Suite-wide settings: the Triton interpreter on CPU hosts, GPU-only tests skipped without CUDA, and each
test's lane marked from what it uses (so nobody has to remember to mark it).

Lanes (scripts/test.sh fast|heavy|full): ``fast`` is every test not marked browser, image, ray or trl
(unit and harness tests); ``heavy`` is those four; ``full`` is both."""
from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede any import of triton

import pytest  # noqa: E402

# The one real server the session's tests share (defined here, once, so every module gets the same one).
from tests.support.env_server import env_server, monitored_env_server, shared_env_server  # noqa: E402,F401


@pytest.fixture(scope="session", autouse=True)
def _evaluations_shared_by_the_workers(tmp_path_factory):
    """tests/support/evaluated.py keeps the run's shared evaluations under the run's temporary directory."""
    from tests.support import evaluated
    evaluated.share_in(tmp_path_factory.getbasetemp())


def _has_cuda() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


# A test is in the heavy lane when its module imports (or its fixtures start) one of these; a test may also be
# marked by hand (the image tests are: their module also holds quick checks of the image scripts).
HEAVY = ("browser", "image", "ray", "trl")
HEAVY_IMPORTS = {"playwright": "browser", "ray": "ray", "trl": "trl", "transformers": "trl",
                 "train_grpo": "trl"}
HEAVY_FIXTURES = {"browser": "browser", "page": "browser", "cluster": "ray", "ray_backend": "ray"}
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.M)
_module_marks: dict[str, set[str]] = {}


def _module_lanes(module) -> set[str]:
    """The heavy lanes of a test module: the modules it holds (however loaded) and imports (also inside a test)."""
    if module.__name__ not in _module_marks:
        names = {v.__name__ for v in vars(module).values() if isinstance(v, types.ModuleType)}
        names |= set(_IMPORT.findall(Path(module.__file__).read_text()))
        _module_marks[module.__name__] = {mark for name in names for prefix, mark in HEAVY_IMPORTS.items()
                                          if name == prefix or name.startswith(prefix + ".")}
    return _module_marks[module.__name__]


def lane_marks(item) -> set[str]:
    """The heavy lanes ``item`` belongs to (none: the fast lane)."""
    marks = {m for m in HEAVY if m in item.keywords}
    marks.update(mark for fixture, mark in HEAVY_FIXTURES.items() if fixture in item.fixturenames)
    if getattr(item, "module", None) is not None:
        marks |= _module_lanes(item.module)
    return marks


def pytest_collection_modifyitems(config, items):
    for item in items:
        for mark in lane_marks(item):
            item.add_marker(getattr(pytest.mark, mark))
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; this host has none")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    """Where a lane's time goes, by test file (setup, call and teardown summed over the file's tests; with
    workers these add up to more than the wall time): the figures issue-sized speed-ups of the suite start from."""
    totals: dict[str, list] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) in ("setup", "call", "teardown"):
                entry = totals.setdefault(report.nodeid.split("::")[0], [0.0, 0])
                entry[0] += report.duration
                entry[1] += report.when == "call"
    if not totals:
        return
    terminalreporter.write_sep("=", "slowest test files (summed test time)")
    for path, (seconds, count) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:15]:
        terminalreporter.write_line(f"{seconds:8.1f}s  {count:4d} tests  {path}")
    terminalreporter.write_line(f"{sum(s for s, _ in totals.values()):8.1f}s  in all")
