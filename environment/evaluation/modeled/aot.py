"""Ahead-of-time compile gate for the target GPU (sm_90), run from the trusted evaluator.

The candidate child cannot exec ptxas (seccomp), so the evaluator has it compiled here: the module
replay/rebuild.py generated from the submission's syntax tree (the very kernels the replayer ran; no
submission code at module level) is compiled by aot_worker.py in its own short-lived process,
sandboxed like a candidate child (rlimits, Landlock: read-only system, writes only in its own temp
dir, execution only of Triton's bundled tools, no TCP; seccomp: no sockets, ptrace or namespaces),
whose whole process group is killed when it ends. Results are cached on disk by a hash of the
generated module, the launch signatures, the Triton version and the target.

Who owns a dead worker: it compiles only kernels derived from the submission, and a native abort
inside LLVM/MLIR/ptxas (report_fatal_error on a malformed inline-asm string, an UNREACHABLE in a
lowering) is reachable from the kernel's text. So a worker that dies without a result makes those
kernels fail to compile (no speed credit), unless a fresh worker also fails to compile the trusted
canary (the start-up self-test's vector add): only then is the environment blamed (HarnessFault).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from environment.config import setting
from environment.evaluation.modeled.model import load_spec
from environment.evaluation.faults import HarnessFault
from environment.evaluation.result import CompileInfo

WORKER = Path(__file__).with_name("aot_worker.py")
ROOT = Path(__file__).resolve().parents[3]
WORKER_VERSION = 4   # part of the cache key: a changed worker or sandbox never serves an old verdict
CACHE_DIR = Path(setting("KERNEL_ENV_AOT_CACHE") or Path.home() / ".cache" / "kernel_env" / "aot")
MAX_KERNELS = 16
MEMORY_BYTES = 4 << 30      # LLVM and ptxas stay well under this for one kernel
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPE = re.compile(r"^(constexpr|\*?(fp|bf|i|u)\d+|\*?fp8[a-z0-9]*)$")
_OPTIONS = {"num_warps": (1, 32), "num_stages": (1, 8), "num_ctas": (1, 1), "maxnreg": (16, 255)}
# the trusted canary: the counter self-test's vector add, written out so the worker loads it like any rebuilt module
CANARY_SOURCE = """import triton
import triton.language as tl


@triton.jit
def _vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""
CANARY_KERNEL = {"name": "_vector_add", "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                      "n": "i32", "BLOCK": "constexpr"},
                 "constexprs": {"BLOCK": 1024}, "aligned": ["x_ptr", "y_ptr", "out_ptr"], "options": {}}


class KernelModule(Protocol):
    """A module of kernels only, with no submission code at module level (replay/rebuild.py's Rebuilt)."""
    source: str          # the module's text, compiled as it stands
    kernels: list[str]   # the kernels it defines: a launch signature naming any other is refused


def _clean_constexpr(value):
    if value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) < 64):
        return value
    if isinstance(value, dict) and set(value) == {"tl_dtype"} and _NAME.match(str(value["tl_dtype"])):
        return value
    raise ValueError(f"constexpr value {value!r} cannot be rebuilt for the AOT compile")


def _clean(sig: dict) -> dict:
    """Launch signatures come from the candidate child: accept only well-formed plain data."""
    name = str(sig.get("name", ""))
    if not _NAME.match(name):
        raise ValueError(f"bad kernel name {name!r}")
    signature = {str(k): str(v) for k, v in dict(sig.get("signature", {})).items()}
    if not all(_NAME.match(k) and _TYPE.match(v) for k, v in signature.items()):
        raise ValueError(f"bad signature for {name}")
    options = {}
    for key, value in dict(sig.get("options", {})).items():
        low, high = _OPTIONS.get(key, (None, None))
        if low is not None and isinstance(value, int) and low <= value <= high:
            options[key] = value
    return {"name": name, "signature": signature,
            "constexprs": {str(k): _clean_constexpr(v) for k, v in dict(sig.get("constexprs", {})).items()},
            "aligned": [str(a) for a in sig.get("aligned", []) if _NAME.match(str(a))], "options": options}


def _limits(cpu_s: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _run_worker(request: dict, timeout_s: float) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="kernel_env_aot_") as tmp:
        request_path, result_path = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.json")
        with open(request_path, "w") as f:
            json.dump(request, f)
        # a private Triton cache: a compile can never plant entries another evaluation would read
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "TMPDIR": tmp,
               "TRITON_DEFAULT_FP_FUSION": "1", "TRITON_CACHE_DIR": os.path.join(tmp, "triton-cache"),
               "PYTHONDONTWRITEBYTECODE": "1", "KERNEL_ENV_ROOT": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-I", str(WORKER), request_path, result_path], cwd=tmp, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=_limits(int(timeout_s) + 5))
        try:
            _, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"the sm_90 compile took longer than {timeout_s:.0f} s") from None
        finally:
            try:  # every exit: nothing the compile started outlives it
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
        if not os.path.exists(result_path):
            tail = stderr.decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"the compile worker exited with {proc.returncode}: {' | '.join(tail)}")
        with open(result_path) as f:
            return json.load(f)


def _canary_fails(request: dict, timeout_s: float) -> str | None:
    """Compile the trusted canary in a fresh worker; the reason it failed, or None when it compiled."""
    canary = dict(request, source=CANARY_SOURCE, kernels=[CANARY_KERNEL])
    try:
        [result] = _run_worker(canary, timeout_s)
    except (RuntimeError, TimeoutError, ValueError) as exc:
        return str(exc)
    return None if result.get("ok") else str(result.get("error"))


def compile_kernels(module: KernelModule, launch_signatures: list[dict], timeout_s: float = 120.0,
                    spec: dict | None = None) -> list[CompileInfo]:
    """One CompileInfo per distinct launch signature (a kernel launched with two BLOCK values is
    compiled twice). Failures are results (ok=False with the reason), never exceptions."""
    spec = spec or load_spec()
    try:
        kernels = [_clean(s) for s in launch_signatures][:MAX_KERNELS]
        filtered = module.source
        unknown = [k["name"] for k in kernels if k["name"] not in module.kernels]
        if unknown:
            raise ValueError(f"{unknown[0]} is not a kernel rebuilt from the source")
    except (ValueError, SyntaxError, TypeError) as exc:
        return [CompileInfo(kernel=str(s.get("name", "?")), ok=False, error=str(exc)) for s in launch_signatures[:1]]
    if not kernels:
        return []
    request = {"source": filtered, "kernels": kernels, "arch": int(spec["arch"]),
               "max_shared_bytes": int(spec["max_shared_bytes"])}
    import triton
    key = hashlib.sha256(json.dumps([request, triton.__version__, WORKER_VERSION], sort_keys=True).encode()).hexdigest()
    cached = CACHE_DIR / f"{key}.json"
    if cached.exists():
        results = json.loads(cached.read_text())
    else:
        try:
            results = _run_worker(request, timeout_s)
        except TimeoutError as exc:  # a kernel too big to compile in time: the submission's
            return [CompileInfo(kernel=k["name"], ok=False, error=str(exc)) for k in kernels]
        except RuntimeError as exc:  # the worker died: the kernels' doing unless the canary fails too; never cached
            broken = _canary_fails(request, timeout_s)
            if broken is not None:
                raise HarnessFault(f"the sm_90 compile worker failed ({exc}), and so did the trusted canary "
                                   f"kernel in a fresh worker: {broken}") from None
            return [CompileInfo(kernel=k["name"], ok=False,
                                error=f"crashed the sm_90 compiler ({exc}); a trusted kernel compiles in a fresh "
                                      "worker, so the crash is this submission's: check inline asm strings and "
                                      "constraints, or use plain triton.language") for k in kernels]
        refused = [r for r in results if r.get("sandbox_refused") is True]  # set by the worker, never parsed from text
        if refused:  # the sandbox refused the compiler something it needs: the environment's failure
            raise HarnessFault(f"the sm_90 compile worker's sandbox refused the compiler: {refused[0].get('error')}")
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(results))
        tmp.replace(cached)  # atomic: concurrent evaluators never read half a file
    fields = set(CompileInfo.model_fields)
    return [CompileInfo(**{k: v for k, v in r.items() if k in fields}) for r in results]
