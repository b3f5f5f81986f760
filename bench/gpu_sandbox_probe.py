"""Which sandbox layer a CUDA child survives (issue 15): forks one child per variant, applies the
layers as environment/evaluation/child/lifecycle.py does (or as it did before CUDA hosts were handled), then
initialises CUDA, runs a torch op and compiles and runs a Triton kernel. Prints one line per variant.

    PYTHONPATH=. python bench/gpu_sandbox_probe.py
"""
from __future__ import annotations

import os
import sys
import tempfile

import torch  # noqa: F401  (imported before the forks, CUDA not initialised, as in the zygote)
import triton  # noqa: F401

from environment.evaluation.transport import sandbox

KERNEL = '''
import torch, triton, triton.language as tl

@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)

def run():
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    add_one[(triton.cdiv(1000, 256),)](x, 1000, BLOCK=256)
    torch.cuda.synchronize()
    assert x[999].item() == 1000.0, x[999].item()
    return float((x @ x).item())
'''


def _layers(variant: str, tmp: str) -> None:
    """variant: '+'-joined tokens. as | data: rlimits; ll: Landlock as a CUDA child gets it, with
    ll:<path>=ro|rw widenings and ll:noscope; sec | secunix: seccomp (secunix: AF_UNIX sockets allowed); none: nothing."""
    mem = 2048 * 2**20
    tokens = variant.split("+")
    if "as" in tokens:
        sandbox.apply_rlimits(sandbox.current_vm_bytes() + mem, 120, 16 * 2**20)
    if "data" in tokens:
        sandbox.apply_rlimits(sandbox.current_vm_bytes("VmData") + mem, 120, 16 * 2**20, data_only=True)
    lls = [t for t in tokens if t == "ll" or t.startswith("ll:")]
    if lls:
        ro, rw, scoped = sandbox.read_only_roots(), [tmp, *sandbox.cuda_writable()], True
        for t in lls[1:] if lls[0] == "ll" else lls:
            spec = t[3:]
            if spec == "noscope":
                scoped = False
            elif spec:
                path, mode = spec.rsplit("=", 1)
                (rw if mode == "rw" else ro).append(path)
        sandbox.apply_landlock(ro, rw, sandbox.exec_roots(), sandbox.device_nodes(), scoped=scoped)
    if "sec" in tokens or "secunix" in tokens:
        sandbox.apply_seccomp(allow_threads=True, allow_exec=True, unix_sockets="secunix" in tokens)


def probe(variant: str) -> str:
    tmp = tempfile.mkdtemp(prefix="probe-")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.environ.update(TMPDIR=tmp, TRITON_CACHE_DIR=os.path.join(tmp, "triton-cache"))
            tempfile.tempdir = tmp
            if sandbox.libcuda_dir():
                os.environ["TRITON_LIBCUDA_PATH"] = sandbox.libcuda_dir()
            _layers(variant, tmp)
            path = os.path.join(tmp, "k.py")
            open(path, "w").write(KERNEL)
            import importlib.util
            spec = importlib.util.spec_from_file_location("k", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            msg = f"OK {mod.run()}"
        except BaseException as exc:
            msg = f"FAIL {type(exc).__name__}: {str(exc)[:300]}"
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 4096):
        out += chunk
    _, status = os.waitpid(pid, 0)
    return out.decode() or f"DIED status={status} (signal {os.WTERMSIG(status) if os.WIFSIGNALED(status) else '-'})"


if __name__ == "__main__":
    print("libcuda:", sandbox.libcuda_dir(), "exec roots:", sandbox.exec_roots(), "devices:", sandbox.device_nodes())
    for v in sys.argv[1:] or ("none", "as", "data", "ll", "sec", "secunix", "data+ll+secunix"):
        print(f"{v:14s} {probe(v)}", flush=True)
