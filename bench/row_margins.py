"""How close kernels of the `rows` tasks come to failing the extreme-value trials: run before changing the 'rows'
family (environment/evaluation/evaluator/inputs.py), so honest kernels keep passing and the broken ones fail.

For each file (named `<task>__<anything>.py`, as tests/honest_styles), many draws of the extreme family at every
listed CPU shape, both corners of the hidden shape and the model shape, in this process under the candidate
child's numerics (sm_90 dot rounding), judged by the harness's own compare() against the fp32 reference with the
float64 oracle. Prints per file: draws judged wrong (and elements), the worst element against the fp32 and float64
references in units of the tolerance, and the judged margin (1.0 = fails).

    PYTHONPATH=. python bench/row_margins.py environment/tasks/problems/layernorm/solutions/correct/*.py
    NSEEDS=16 PYTHONPATH=. python bench/row_margins.py tests/honest_styles/layernorm__*.py
"""
from __future__ import annotations

import os
import sys
import types
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

from environment.evaluation.child import autotune, gpu_numerics  # noqa: E402
from environment.evaluation.evaluator.compare import compare  # noqa: E402
from environment.evaluation.evaluator.inputs import make_inputs  # noqa: E402
from environment.tasks import get_task  # noqa: E402


def _task_of(path: Path):
    parts = path.parts
    return get_task(parts[parts.index("solutions") - 1] if "solutions" in parts else path.stem.split("__")[0])


def _shapes(task) -> list[dict[str, int]]:
    hidden = task.hidden_shape or {}
    corners = [{k: v[0] for k, v in hidden.items()}, {k: v[1] for k, v in hidden.items()}] if hidden else []
    return list(task.cpu_shapes) + corners + ([dict(task.model_shape)] if task.model_shape else [])


def margins(path: Path, seeds: range) -> str:
    task = _task_of(path)
    ref = task.load_reference()
    mod = types.ModuleType(path.stem)
    exec(compile(path.read_text(), str(path), "exec"), mod.__dict__)
    shapes = _shapes(task)
    fails = bad = 0
    worst32 = worst64 = judged = 0.0
    for shape in shapes:
        for seed in seeds:
            inputs = make_inputs(ref, shape, "extreme", 1000 + seed, extreme="rows")
            init = ref.get_init_inputs()
            torch.manual_seed(1)
            model = ref.Model(*init)
            torch.manual_seed(1)
            new = mod.ModelNew(*init)
            with torch.no_grad():
                want = model(*inputs)
                got = new(*[t.clone() for t in inputs])
                want64 = model.double()(*[t.double() for t in inputs])
            err, _, mismatch = compare(want, got, task.atol, task.rtol, 0, "extreme", shape, oracle=want64)
            if err:
                fails += 1
                bad += mismatch.mismatched if mismatch else 0
            g, e = got.double(), want.double()
            r32 = (g - e).abs() / (task.atol + task.rtol * e.abs())
            r64 = (g - want64).abs() / (task.atol + task.rtol * want64.abs())
            row_err = (e - want64).abs().amax(dim=-1, keepdim=True)   # the oracle's slack, as compare() widens it
            slack = (g - want64).abs() / (task.atol + task.rtol * want64.abs() + 2.0 * row_err)
            worst32, worst64 = max(worst32, float(r32.max())), max(worst64, float(r64.max()))
            judged = max(judged, float(torch.minimum(r32, slack).max()))
    return (f"{path.stem}: {fails}/{len(shapes) * len(seeds)} draws judged wrong ({bad} elements); worst vs fp32 "
            f"{worst32:.3f} of the tolerance, vs fp64 {worst64:.3f}; judged margin (1.0 = fails) {judged:.3f}")


def main() -> None:
    gpu_numerics.install()
    autotune.install()
    seeds = range(int(os.environ.get("NSEEDS", "8")))
    for name in sys.argv[1:]:
        print(margins(Path(name), seeds), flush=True)


if __name__ == "__main__":
    main()
