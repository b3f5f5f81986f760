"""Time the sampled GPU-shape replay (with its dependency closure) of one solution, outside the harness.

    PYTHONPATH=. TRITON_INTERPRET=1 python bench/closure_cost.py FILE [--task mlp_block] [--seed 0] [--profile]

Records the candidate at the task's first GPU shape (host code only, no kernel runs), then replays it under the
sampler's counting hooks (CostCounter with a sample seed) and prints the wall time, the programs the closure ran per
producer launch and, on a failure, the message (the closure's bound names the model's limit)."""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as the harness's children run (transport/pool.py): one BLAS thread
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import cProfile
import importlib.util
import pstats
import tempfile
import time
from pathlib import Path

import torch

from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.replay.execute import Replay
from environment.evaluation.replay.rebuild import rebuild
from environment.evaluation.replay.sampled import run_sampled
from environment.evaluation.replay.recorder import TraceRecorder
from environment.tasks import get_task


def _load(source: str, name: str):
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--task", default="mlp_block")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", type=int, default=0, help="index into the task's gpu_shapes")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--bound", type=int, default=0, help="closure.PROGRAM_ACCESSES for this run (0: as shipped)")
    a = ap.parse_args()
    if a.bound:
        from environment.evaluation.replay import closure
        closure.PROGRAM_ACCESSES = a.bound
    task = get_task(a.task)
    shape = task.gpu_shapes[a.shape]
    ref = _load(task.reference_code, "reference_bench")
    for k, v in shape.items():
        setattr(ref, k, v)
    source = Path(a.file).read_text()
    module, rebuilt = _load(source, "cand_bench"), rebuild(source)
    kernels = _load(rebuilt.source, "cand_bench_rebuilt")
    torch.manual_seed(0)
    inputs = ref.get_inputs()
    model = module.ModelNew(*ref.get_init_inputs())
    with torch.no_grad(), TraceRecorder(inputs) as recorder:
        out = model(*inputs)
    trace, constants = recorder.finish([out])
    counter = CostCounter(lifts_are_copies=True, sample_seed=a.seed, sampler=run_sampled)
    replay = Replay(trace, inputs, constants, kernels, rebuilt.kernels, counter)
    prof = cProfile.Profile() if a.profile else None
    t0 = time.perf_counter()
    error = ""
    try:
        if prof:
            prof.enable()
        with torch.no_grad(), counter:
            replay.run(keep=False)
    except Exception as exc:   # the replay's own message is what the harness would report
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if prof:
            prof.disable()
    wall = time.perf_counter() - t0
    print(f"{Path(a.file).name} task={a.task} shape={shape} seed={a.seed} replay {wall:.1f}s")
    for p in getattr(counter, "producers", []):
        print(f"  producer {p.name} grid={p.grid} programs run={len(p.run)} memory instructions/program={p.accesses}")
    for r in counter.launch_records():
        print(f"  launch {r.get('name')} programs={r.get('programs')} sampled={r.get('sampled_programs')}")
    if error:
        print("  error:", error[:600])
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
