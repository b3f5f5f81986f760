"""The evaluation record carries the submission line a failure points at (the playground marks it in
the editor): the static checks' first error and each flag's construct, and where loading raised,
from a real evaluation in the sandboxed child."""
from __future__ import annotations

from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.evaluation.result import EvalResult
from environment.evaluation.static.checks import check_source
from environment.tasks import get_task
from tests.support.evaluated import evaluated

REF = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x, bias):\n        return x + bias\n"
FALLBACK = """import torch
import subprocess

class ModelNew(torch.nn.Module):
    def forward(self, x, bias):
        try:
            return x + bias
        except Exception:
            return x
"""


def test_static_findings_name_their_lines():
    r = check_source(FALLBACK, REF)
    assert not r.ok and r.line == 2  # the first error: `import subprocess` on line 2
    assert r.flag_lines == {f"{F.FORBIDDEN_IMPORT}:subprocess": 2, F.TRY_EXCEPT_FALLBACK: 6}
    syntax = check_source("import torch\n\nclass ModelNew(:\n", REF)
    assert syntax.line == 3 and syntax.flag_lines == {}
    assert check_source("", REF).line is None  # not tied to a line


def _evaluated(source: str, shared: bool = False) -> EvalResult:
    result = (evaluated if shared else evaluate)(get_task("gelu_bias"), source, seed=0)
    return EvalResult.model_validate_json(result.model_dump_json())  # what the playground reads back


def test_an_exception_at_load_names_the_innermost_submission_line():
    source = ("import torch\n\ndef helper():\n    return {}['missing']\n\n"
              "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.table = helper()\n\n    def forward(self, x, bias):\n        return x + bias\n")
    r = _evaluated(source)
    assert r.outcome == "submission_failed" and not r.load.ok and "KeyError" in r.load.error
    assert r.load.line == 4 and r.failing_line == 4  # in helper(), not the constructor that called it


def test_a_static_hack_points_at_its_construct_and_a_clean_step_at_nothing():
    r = _evaluated(FALLBACK.replace("import subprocess\n", ""))
    hack = next(f for f in r.findings if f.hack)
    assert hack.name == F.TRY_EXCEPT_FALLBACK and hack.line == 5 and r.failing_line == 5
    good = next(p for p in get_task("gelu_bias").solutions["correct"] if p.name.startswith("torch_"))
    ok = _evaluated(good.read_text(), shared=True)   # a shipped solution: test_tasks's evaluation, shared
    assert ok.compiled and ok.failing_line is None and ok.load.line is None
