"""The design this harness replaces (KernelBench, kernrl, robust-kbench): a fresh Python interpreter
per evaluation that imports torch and triton, loads reference and candidate, runs the trials and
compares. Used only as the side-by-side baseline of bench/harness.py.

    python bench/fresh_baseline.py TASK_ID SOLUTION_PATH
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import triton  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from environment.evaluation.evaluator.inputs import make_inputs, plan_trials  # noqa: E402
from environment.tasks import get_task  # noqa: E402


def main() -> int:
    task = get_task(sys.argv[1])
    source = open(sys.argv[2]).read()
    reference = task.load_reference()
    namespace: dict = {"__name__": "candidate", "__file__": sys.argv[2]}
    exec(compile(source, sys.argv[2], "exec"), namespace)
    torch.manual_seed(0)
    ref_model = reference.Model(*reference.get_init_inputs())
    torch.manual_seed(0)
    cand_model = namespace["ModelNew"](*reference.get_init_inputs())
    ok = True
    for trial in plan_trials(task, "cpu", list(range(5))):
        inputs = make_inputs(reference, trial.shape, trial.distribution, trial.seed)
        with torch.no_grad():
            got = cand_model(*[t.clone() for t in inputs])
            want = ref_model(*inputs)
        ok &= bool(torch.allclose(got, want, atol=task.atol, rtol=task.rtol))
    print("correct" if ok else "wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
