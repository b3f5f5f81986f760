"""Self-check of the task library under problems/.

For every task: task.yaml has the required keys, the reference runs on every CPU shape, each
shipped correct solution matches it on every shape, distribution and seed, each shipped wrong
solution fails somewhere, the output is not degenerate (not constant, changes when any single
input changes), every Triton solution really launches a kernel, and the interpreter wall time of
each Triton solution is reported per shape (and for the optional model_shape).

    python environment/tasks/check_solutions.py [task_id ...]

Run it as a script (not with -m, which imports the environment package and numpy first): it sets
TRITON_INTERPRET=1 and OPENBLAS_NUM_THREADS=1 before numpy and triton are imported.

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

import torch
import triton.runtime.interpreter as interpreter
import yaml

PROBLEMS = pathlib.Path(__file__).parent / "problems"
REQUIRED_KEYS = {"id", "title", "difficulty", "graded", "dtype", "tolerance", "description",
                 "cpu_shapes", "gpu_shapes", "distributions"}
DEFAULT_SEEDS = 2
WIDE_SCALE = 4.0  # the 'wide' distribution: floating inputs scaled by 4
INIT_SEED = 1234

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


def make_inputs(ref, shape: dict, dist: str, seed: int) -> list:
    for name, value in shape.items():
        setattr(ref, name, value)
    torch.manual_seed(seed)
    inputs = ref.get_inputs()
    if dist == "wide":
        inputs = [x * WIDE_SCALE if torch.is_tensor(x) and x.is_floating_point() else x
                  for x in inputs]
    return inputs


def build(cls, ref, seeded: bool):
    if seeded:
        torch.manual_seed(INIT_SEED)
    return cls(*ref.get_init_inputs())


def clone(inputs: list) -> list:
    return [x.clone() if torch.is_tensor(x) else x for x in inputs]


def compare(out, expected, tol: dict):
    """None when out matches expected, else a short reason."""
    if not torch.is_tensor(out):
        return f"output is {type(out).__name__}, not a tensor"
    try:
        torch.testing.assert_close(out, expected, atol=tol["atol"], rtol=tol["rtol"])
    except AssertionError as err:
        lines = str(err).strip().splitlines()
        return " ".join([lines[0]] + [line.strip() for line in lines
                                      if line.startswith(("Greatest absolute", "Absolute"))])
    return None


def check_task(task_dir: pathlib.Path, seeds: range, failures: list, timings: list) -> None:
    meta = yaml.safe_load((task_dir / "task.yaml").read_text())
    tid = task_dir.name
    missing = REQUIRED_KEYS - meta.keys()
    if missing or meta["id"] != tid:
        failures.append(f"{tid}: task.yaml missing {sorted(missing)} or id mismatch")
        return
    tol, seeded = meta["tolerance"], bool(meta.get("init_seeded", False))
    ref = load_module(task_dir / "reference.py")
    cases = [(shape, dist, seed) for shape in meta["cpu_shapes"]
             for dist in meta["distributions"] for seed in seeds]
    expected = {}
    for shape, dist, seed in cases:
        inputs = make_inputs(ref, shape, dist, seed)
        with torch.no_grad():
            out = build(ref.Model, ref, seeded)(*inputs)
        if not torch.isfinite(out).all():
            failures.append(f"{tid}: reference output not finite for {shape} {dist}")
        expected[(str(shape), dist, seed)] = out
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
            inputs = make_inputs(ref, shape, dist, seed)
            launches_before = _launches
            try:
                with torch.no_grad():
                    out = build(sol.ModelNew, ref, seeded)(*clone(inputs))
                reason = compare(out, expected[(str(shape), dist, seed)], tol)
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
              + (f"  e.g. {bad[0][3][:90]}" if bad and path.parent.name == "wrong" else ""))
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
