"""Self-check of the task library under problems/.

For every task: task.yaml has the required keys, the reference runs on every CPU shape, each
shipped correct solution matches it on every shape, distribution and seed and on hidden shapes,
each shipped wrong solution fails somewhere, the output is not degenerate (not constant, changes
when any single input changes), every Triton solution really launches a kernel, and the
interpreter wall time of each Triton solution is reported per shape (and for the optional
model_shape). Inputs, hidden shapes and the comparison (with the float64 oracle) are the
harness's own; solutions run with the harness's GPU numerics (tl.dot rounded as on sm_90,
programs in a shuffled order, write-write races reported).

    python environment/tasks/check_solutions.py [--seeds 2] [task_id ...]

It sets TRITON_INTERPRET=1 and OPENBLAS_NUM_THREADS=1 before numpy and triton are imported.

This is a developer tool that runs shipped, trusted files in-process; candidate code is never
run this way (the harness in environment/evaluation/ sandboxes it).
"""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
# Interpreted tl.dot calls numpy's matmul; a multithreaded OpenBLAS on a busy machine makes each
# small dot ~1000x slower (40 ms instead of 0.04 ms for 64x128x64), so pin it to one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import ast
import importlib.util
import itertools
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository root, run as a script

import torch  # noqa: E402
import triton.runtime.interpreter as interpreter  # noqa: E402
import yaml  # noqa: E402

from environment.evaluation.child import gpu_numerics  # noqa: E402
from environment.evaluation.evaluator.compare import compare as harness_compare  # noqa: E402
from environment.evaluation.evaluator.inputs import hidden_shape, make_inputs as harness_inputs  # noqa: E402
from environment.tasks.task import load_task_folder  # noqa: E402

PROBLEMS = pathlib.Path(__file__).parent / "problems"
REQUIRED_KEYS = {"id", "title", "difficulty", "graded", "dtype", "tolerance", "description",
                 "cpu_shapes", "gpu_shapes", "distributions"}
DEFAULT_SEEDS = 2
INIT_SEED = 1234
gpu_numerics.install()

_launches = 0
_original_run = interpreter.InterpretedFunction.run


def _counting_run(self, *args, **kwargs):
    global _launches
    _launches += 1
    return _original_run(self, *args, **kwargs)


interpreter.InterpretedFunction.run = _counting_run
_module_counter = itertools.count()


def load_module(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"_task_mod_{next(_module_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_inputs(ref, shape: dict, dist: str, seed: int, extreme=None) -> list:
    return harness_inputs(ref, shape, dist, seed, extreme)


def build(cls, ref, seeded: bool):
    if seeded:
        torch.manual_seed(INIT_SEED)
    return cls(*ref.get_init_inputs())


def clone(inputs: list) -> list:
    return [x.clone() if torch.is_tensor(x) else x for x in inputs]


def compare(out, expected, tol: dict, oracle=None):
    """None when out matches expected (or the float64 oracle, as the harness judges), else a short reason."""
    if not torch.is_tensor(out):
        return f"output is {type(out).__name__}, not a tensor"
    err, _, _ = harness_compare(expected, out, tol["atol"], tol["rtol"], 0, "", {}, oracle=oracle)
    return err.split(" on trial ")[0] if err else None


def check_task(task_dir: pathlib.Path, seeds: range, failures: list, timings: list) -> None:
    meta = yaml.safe_load((task_dir / "task.yaml").read_text())
    tid = task_dir.name
    missing = REQUIRED_KEYS - meta.keys()
    if missing or meta["id"] != tid:
        failures.append(f"{tid}: task.yaml missing {sorted(missing)} or id mismatch")
        return
    task = load_task_folder(task_dir)
    tol, seeded = meta["tolerance"], bool(meta.get("init_seeded", False))
    ref = load_module(task_dir / "reference.py")
    cases = [(shape, dist, seed) for shape in meta["cpu_shapes"]
             for dist in task.distributions for seed in seeds]
    if task.hidden_shape:  # one hidden shape per seed, as the harness draws them
        dists = [d for d in task.distributions if d != "extreme"]
        cases += [(hidden_shape(task, 1000 + seed), dists[seed % len(dists)], seed) for seed in seeds]
    expected = {}
    for shape, dist, seed in cases:
        inputs = make_inputs(ref, shape, dist, seed, task.extreme)
        with torch.no_grad():
            model = build(ref.Model, ref, seeded)
            out = model(*inputs)
            oracle = model.double()(*[x.double() if x.is_floating_point() else x for x in inputs])
        if not torch.isfinite(out).all():
            failures.append(f"{tid}: reference output not finite for {shape} {dist}")
        expected[(str(shape), dist, seed)] = out, oracle
    check_degenerate(tid, ref, meta, tol, seeded, failures)

    solutions = sorted((task_dir / "solutions").glob("*/*.py"))
    kinds = {(p.parent.name, p.name.split("_")[0]) for p in solutions}
    if not {("correct", "triton"), ("correct", "torch")} <= kinds or not any(
            kind == "wrong" for kind, _ in kinds):
        failures.append(f"{tid}: needs correct/triton_*.py, correct/torch_*.py and wrong/*.py")
    for path in solutions:
        name = f"{tid}/{path.parent.name}/{path.name}"
        if not ast.get_docstring(ast.parse(path.read_text())):
            failures.append(f"{name}: no module docstring")
        sol = load_module(path)
        results = []
        for shape, dist, seed in cases:
            inputs = make_inputs(ref, shape, dist, seed, task.extreme)
            launches_before = _launches
            try:
                with torch.no_grad(), gpu_numerics.trial(order_seed=seed + 17) as numerics:
                    out = build(sol.ModelNew, ref, seeded)(*clone(inputs))
                exp, oracle = expected[(str(shape), dist, seed)]
                reason = compare(out, exp, tol, oracle)
                if numerics.races:
                    reason = "write-write race: " + numerics.races[0]
            except Exception as err:  # a wrong solution may crash; that counts as failing
                reason = f"raised {type(err).__name__}: {err}"
            if path.name.startswith("triton_") and reason is None and _launches == launches_before:
                reason = "no Triton kernel launched"
            results.append((shape, dist, seed, reason))
        bad = [r for r in results if r[3] is not None]
        if path.parent.name == "correct" and bad:
            shape, dist, seed, reason = bad[0]
            failures.append(f"{name}: fails {shape} {dist} seed={seed}: {reason}")
        elif path.parent.name == "wrong" and not bad:
            failures.append(f"{name}: wrong solution passes every case")
        verdict = "ok" if (path.parent.name == "correct") != bool(bad) else "BAD"
        print(f"  {name:58s} {verdict}  failed {len(bad)}/{len(results)}"
              + (f"  e.g. {bad[0][1]} {bad[0][3][:90]}" if bad and path.parent.name == "wrong" else ""))
        if path.parent.name == "correct" and path.name.startswith("triton_"):
            timings.append((name, time_solution(ref, sol, meta, seeded)))


def check_degenerate(tid, ref, meta, tol, seeded, failures) -> None:
    """The output must not be constant and must change when any single input changes."""
    shape = meta["cpu_shapes"][0]
    base = make_inputs(ref, shape, "normal", 0)
    other = make_inputs(ref, shape, "normal", 1)
    model = build(ref.Model, ref, seeded)
    with torch.no_grad():
        out = model(*base)
        if out.numel() > 1 and out.float().std() == 0:
            failures.append(f"{tid}: output is constant")
        for i in range(len(base)):
            swapped = list(base)
            swapped[i] = other[i]
            if compare(model(*swapped), out, tol) is None:
                failures.append(f"{tid}: output does not depend on input {i}")


def time_solution(ref, sol, meta, seeded) -> dict:
    """(wall, CPU) interpreter seconds of one forward call per shape, after one warm-up call.

    CPU time is what the call costs on an idle core; wall time also counts other processes."""
    shapes = list(meta["cpu_shapes"]) + ([meta["model_shape"]] if "model_shape" in meta else [])
    seconds = {}
    for shape in shapes:
        inputs = make_inputs(ref, shape, "normal", 0)
        model = build(sol.ModelNew, ref, seeded)
        with torch.no_grad():
            model(*clone(inputs))
            start, start_cpu = time.perf_counter(), time.process_time()
            model(*clone(inputs))
        key = "model " if shape is meta.get("model_shape") else ""
        seconds[key + ",".join(f"{k}={v}" for k, v in shape.items())] = (
            time.perf_counter() - start, time.process_time() - start_cpu)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_ids", nargs="*", help="tasks to check (default: all)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                        help="input seeds per shape and distribution")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    task_dirs = [PROBLEMS / t for t in args.task_ids] if args.task_ids else sorted(
        p for p in PROBLEMS.iterdir() if (p / "task.yaml").exists())
    failures, timings = [], []
    for task_dir in task_dirs:
        print(task_dir.name)
        check_task(task_dir, range(args.seeds), failures, timings)
    print("\nTriton interpreter seconds per forward call (wall, CPU):")
    for name, seconds in timings:
        print(f"  {name}")
        for shape, (wall, cpu) in seconds.items():
            print(f"      {shape:40s} {wall:6.3f} {cpu:6.3f}")
    print("\n" + ("\n".join(f"FAIL {f}" for f in failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
