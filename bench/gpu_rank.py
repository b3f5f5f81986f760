"""Measured H100 speedups of every shipped correct solution (and each reference run as ModelNew),
for ranking the modeled speedups against real hardware (issue 15). Runs on a CUDA host.

Two measurements, each `--repeats` times, one JSON line per program and repeat in --out:

  direct   the program in this process at the task's largest GPU shape, CUDA events through
           triton.testing.do_bench (L2 flushed before every call, median of its reps), candidate and
           reference interleaved; the cleanest number a GPU gives for this code.
  harness  the harness's own CUDA path (environment.evaluation.harness.evaluate on a CUDA host:
           compiled Triton, the evaluator's clock, L2 flush), what a CUDA-host Space would reward.

    PYTHONPATH=. python bench/gpu_rank.py direct  --repeats 10 --out $OUT/direct.jsonl
    PYTHONPATH=. python bench/gpu_rank.py harness --repeats 10 --out $OUT/harness.jsonl

bench/rank_report.py joins these with the modeled speedups (CPU host) and prints the table.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

import torch

from environment.tasks import get_task, list_tasks

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "reference"
DEVICE = ""  # the GPU and software versions, set in main(); stored with every record


def programs(task_ids: list[str] | None):
    """(task, name, source) for every correct solution and the reference run as ModelNew."""
    for listed in list_tasks():
        task = get_task(listed.id)
        if task_ids and task.id not in task_ids:
            continue
        yield task, REFERENCE, reference_as_submission(task)
        for path in task.solutions.get("correct", ()):
            yield task, path.stem, path.read_text()


def reference_as_submission(task) -> str:
    """The reference's own code under the name ModelNew (a subclass of Model is refused as reuse)."""
    import re
    return re.sub(r"\bModel\b", "ModelNew", task.reference_code)


def gpu_shape(task) -> dict[str, int]:
    return max(task.shapes("cuda"), key=lambda s: sum(s.values()) if s else 0)


def _module(name: str, source: str):
    path = ROOT / ".gpu_rank_tmp" / f"{name}.py"  # Triton's JIT reads kernel source from the file
    path.parent.mkdir(exist_ok=True)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def direct(task, name: str, source: str, repeats: int, seed: int):
    """Yield one record per repeat: candidate and reference median ms under do_bench."""
    from triton.testing import do_bench
    from environment.evaluation.evaluator.inputs import init_args, make_inputs
    reference = task.load_reference()
    shape = gpu_shape(task)
    inputs = [t.cuda() if isinstance(t, torch.Tensor) else t
              for t in make_inputs(reference, shape, "normal", seed)]
    init = init_args(reference)
    torch.manual_seed(seed)
    ref_model = reference.Model(*init).cuda()
    cand_mod = _module(f"cand_{task.id}_{name}", source)
    torch.manual_seed(seed)
    cand_model = cand_mod.ModelNew(*init).cuda()
    with torch.no_grad():
        expected = ref_model(*inputs)
        got = cand_model(*inputs)
        torch.cuda.synchronize()
        ok = torch.allclose(got.float(), expected.float(), atol=task.atol * 10, rtol=task.rtol * 10)
        err = (got.double() - expected.double()).abs().max().item()
        for _ in range(repeats):
            rec = {}
            for side, model in (("reference", ref_model), ("candidate", cand_model)):
                rec[side] = do_bench(lambda: model(*inputs), warmup=25, rep=200, return_mode="median")
            yield {"ok": bool(ok), "max_abs_err": err, **{f"{k}_ms": v for k, v in rec.items()},
                   "speedup": rec["reference"] / rec["candidate"]}


def harness(task, name: str, source: str, repeats: int, seed: int):
    from environment.evaluation.harness import evaluate
    for i in range(repeats):
        start = time.perf_counter()
        result = evaluate(task, source, seed=seed + i)
        wall = time.perf_counter() - start
        p = result.performance
        yield {"outcome": result.outcome, "correct": result.correct, "backend": result.backend,
               "speedup": p.speedup if p else None, "speedup_kind": p.speedup_kind if p else None,
               "reference_ms": p.reference.median_ms if p and p.reference else None,
               "candidate_ms": p.candidate.median_ms if p and p.candidate else None,
               "note": p.note if p else None, "flags": list(result.flags),
               "error": result.harness_error or (None if result.correct else str(result.correctness)[:400]),
               "stage_s": result.stage_s, "wall_s": wall, "signals": _signals(task, source, result)}


def _signals(task, source: str, result) -> list[dict]:
    """The independent signals the environment attaches to this record (measured against modeled, on a CUDA host)."""
    try:
        from environment.signals import compute
        return [s.model_dump() for s in compute(task, source, result)]
    except Exception as exc:  # a missing optional package on the GPU image must not lose the measurement
        return [{"name": "error", "why": f"{type(exc).__name__}: {exc}"}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("direct", "harness"))
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", nargs="*")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    measure = direct if args.mode == "direct" else harness
    global DEVICE
    import triton
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device"
    DEVICE = f"{gpu} (torch {torch.__version__}, triton {triton.__version__})"
    with open(args.out, "a") as out:
        for task, name, source in programs(args.tasks):
            start = time.perf_counter()
            try:
                for i, rec in enumerate(measure(task, name, source, args.repeats, args.seed)):
                    out.write(json.dumps({"mode": args.mode, "task": task.id, "difficulty": task.difficulty,
                                          "dtype": task.dtype, "device": DEVICE, "program": name,
                                          "repeat": i, **rec}) + "\n")
                    out.flush()
            except Exception as exc:
                out.write(json.dumps({"mode": args.mode, "task": task.id, "program": name, "failed":
                                      f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}) + "\n")
                out.flush()
            print(f"{args.mode} {task.id}/{name}: {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
