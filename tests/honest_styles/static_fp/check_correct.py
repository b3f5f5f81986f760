"""Run each honest file against its task's reference at the reference's own sizes in the Triton interpreter
(autotune benchmarked by modeled time, as the harness's child does) and print one line per file:
``python tests/honest_styles/static_fp/check_correct.py [FILE...]``. Exit status 1 if any is wrong."""
import os
import sys
import types
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402

from environment.evaluation.child import autotune, gpu_numerics  # noqa: E402
from environment.tasks import get_task  # noqa: E402

HERE = Path(__file__).parent


def _module(name: str, code: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(code, name, "exec"), module.__dict__)
    return module


def check(path: Path) -> str:
    task = get_task(path.stem.split("__")[0])
    ref, cand = task.load_reference(), _module(path.stem, path.read_text())
    torch.manual_seed(0)
    inputs, init = ref.get_inputs(), ref.get_init_inputs()
    torch.manual_seed(1)
    model = ref.Model(*init)
    torch.manual_seed(1)
    new = cand.ModelNew(*init)
    with torch.no_grad():
        want, got = model(*inputs), new(*[t.clone() for t in inputs])
    err = float((got - want).abs().max())
    ok = got.shape == want.shape and torch.allclose(got, want, atol=task.atol, rtol=task.rtol)
    return f"{'ok' if ok else 'WRONG'} {path.stem} max_abs_err={err:.2e}"


if __name__ == "__main__":
    gpu_numerics.install()   # as the harness runs kernels: bf16 dot operands converted, casts rounded as sm_90
    autotune.install()
    files = [Path(a) for a in sys.argv[1:]] or sorted(HERE.glob("*__*.py"))
    lines = [check(p) for p in files]
    print("\n".join(lines))
    sys.exit(any(not line.startswith("ok") for line in lines))
