"""Measured H100 times of the fidelity pairs (tests/environment/evaluation/modeled/test_fidelity.py) at the shapes the
modeled time prices them at: CUDA events, L2 flushed before every call, median of 20 after 3 warm-ups.
Needs a CUDA GPU (no interpreter).

    PYTHONPATH=. python bench/fidelity_gpu.py
"""
from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
FID = ROOT / "tests" / "environment" / "evaluation" / "modeled" / "fidelity"
PROB = ROOT / "environment" / "tasks" / "problems"
SHAPES = {"gelu_bias": {"M": 4097, "N": 3001}, "matmul_bias_relu": {"M": 8191, "K": 2048, "N": 3001},
          "rmsnorm": {"M": 8192, "N": 4096}}
PAIRS = [("gelu_bias", PROB / "gelu_bias/solutions/correct/triton_fused.py", FID / "gelu_column_walk.py"),
         ("matmul_bias_relu", PROB / "matmul_bias_relu/solutions/correct/triton_tiled.py",
          FID / "matmul_row_per_program.py"),
         ("gelu_bias", PROB / "gelu_bias/solutions/correct/triton_fused.py", FID / "gelu_unfused.py"),
         ("rmsnorm", PROB / "rmsnorm/solutions/correct/triton_fused_rows.py", FID / "rmsnorm_two_passes.py"),
         ("gelu_bias", PROB / "gelu_bias/solutions/correct/triton_fused.py", FID / "gelu_eight_programs.py"),
         # the two sm_90-compile pairs of test_fidelity.py: the shipped kernel with 16384-element tiles
         # (255 registers, spills) and with 8192-element tiles (2 programs resident per SM)
         ("gelu_bias", PROB / "gelu_bias/solutions/correct/triton_fused.py", "tiles:16384"),
         ("gelu_bias", PROB / "gelu_bias/solutions/correct/triton_fused.py", "tiles:8192")]


def materialise(worse) -> Path:
    """A pair's worse kernel as a file (Triton's JIT reads kernel source from the file)."""
    if isinstance(worse, Path):
        return worse
    block = int(worse.split(":")[1])
    source = (PROB / "gelu_bias/solutions/correct/triton_fused.py").read_text()
    assert "BLOCK = 1024\n" in source
    path = ROOT / ".gpu_rank_tmp" / f"gelu_tiles_{block}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(source.replace("BLOCK = 1024\n", f"BLOCK = {block}\n"))
    return path


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"fid_{path.stem}_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(task: str):
    ref = load(PROB / task / "reference.py")
    for k, v in SHAPES[task].items():
        setattr(ref, k, v)
    torch.manual_seed(0)
    return ref, [t.cuda() for t in ref.get_inputs()]


def time_ms(fn, args) -> float:
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn(*args)
    samples = []
    for _ in range(20):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def main() -> None:
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    print(f"device: {torch.cuda.get_device_name()}\n")
    print("| task | good | worse | good ms | worse ms | worse / good | worse correct |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for task, good, worse in PAIRS:
        worse = materialise(worse)
        ref, args = inputs(task)
        expected = ref.Model().cuda()(*args)
        g, w = load(good).ModelNew().cuda(), load(worse).ModelNew().cuda()
        ok = torch.allclose(w(*args), expected, atol=1e-3, rtol=1e-3)
        tg, tw = time_ms(g, args), time_ms(w, args)
        print(f"| {task} | {good.name} | {worse.name} | {tg:.4f} | {tw:.4f} | {tw / tg:.2f} | {ok} |", flush=True)


if __name__ == "__main__":
    main()
