"""Compile Triton kernels ahead of time for a target GPU; run as a script in its own process:

    python aot_worker.py REQUEST.json RESULT.json

REQUEST: {"source": filtered kernel source, "kernels": [launch signatures], "arch": 90,
"max_shared_bytes": int}. RESULT: one dict per kernel with CompileInfo's fields plus "seconds".
Runs without TRITON_INTERPRET, on a CPU-only host too: the bundled ptxas does the final step.
The source is the module rebuild.py generated (imports, literals, @triton.jit definitions), and
the worker enters the sandbox before it loads it: Landlock (read-only system and Python trees,
writes only in its own directory, execution only of Triton's bundled tools, no TCP), seccomp
(threads and ptxas allowed; sockets, ptrace, namespaces killed) and the rlimits of its parent.
Imports nothing from the project but the sandbox module (the package would pull the server in).
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import traceback


def _resources(cubin: bytes, workdir: str) -> dict:
    import triton

    path = os.path.join(workdir, "kernel.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    text = subprocess.run([tool, "--dump-resource-usage", path], capture_output=True, text=True, timeout=30).stdout
    found = {k: int(v) for k, v in re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", text.split("Function", 1)[-1])}
    return found


def _constexpr(value):
    if isinstance(value, dict) and "tl_dtype" in value:
        import triton.language as tl
        return tl.core.dtype(value["tl_dtype"])
    return value


def _compile(module, kernel: dict, arch: int, max_shared: int, workdir: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = getattr(module, kernel["name"], None)
    if not isinstance(fn, triton.runtime.jit.JITFunction):
        return {"ok": False, "error": f"{kernel['name']} is not a rebuilt @triton.jit function"}
    constexprs = {name: _constexpr(v) for name, v in kernel["constexprs"].items()}
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in kernel["aligned"] if n in fn.arg_names}
    src = ASTSource(fn, kernel["signature"], constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=dict(kernel["options"]))
    usage = _resources(compiled.asm["cubin"], workdir)
    shared = max(int(compiled.metadata.shared), usage.get("SHARED", 0))
    # ptxas puts spilled registers in the thread's stack frame (STACK), not in LOCAL (user local arrays,
    # which Triton kernels do not have): both are local memory, per thread
    spills = usage.get("STACK", 0) + usage.get("LOCAL", 0) if "REG" in usage else None
    info = {"ok": True, "registers": usage.get("REG"), "spills": spills, "shared_bytes": shared,
            "num_warps": int(compiled.metadata.num_warps)}
    if shared > max_shared:
        info.update(ok=False, error=f"needs {shared} bytes of shared memory; sm_{arch} allows {max_shared} per "
                                    "block: use smaller tiles or fewer stages")
    return info


def _enter_sandbox(workdir: str) -> dict:
    """Landlock and seccomp around the compile (after triton is imported: it reads its own files)."""
    import triton  # noqa: F401
    import triton.compiler  # noqa: F401
    import triton.backends.nvidia.compiler  # noqa: F401
    sys.path.insert(0, os.environ["KERNEL_ENV_ROOT"])
    from environment.evaluation.transport import sandbox
    layers = {"landlock": sandbox.apply_landlock(sandbox.read_only_roots(), [workdir], sandbox.triton_tools())}
    layers["seccomp"] = sandbox.apply_seccomp(allow_threads=True, allow_exec=True)
    return layers


def main(request_path: str, result_path: str) -> None:
    with open(request_path) as f:
        request = json.load(f)
    workdir = os.path.dirname(os.path.abspath(request_path))
    _enter_sandbox(workdir)
    module_path = os.path.join(workdir, "candidate_kernels.py")
    with open(module_path, "w") as f:
        f.write(request["source"])
    results = []
    try:
        spec = importlib.util.spec_from_file_location("candidate_kernels", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:
        message = f"the kernel definitions do not load: {type(exc).__name__}: {exc}"
        results = [{"kernel": k["name"], "ok": False, "error": message, "seconds": 0.0} for k in request["kernels"]]
        module = None
    for kernel in request["kernels"] if module is not None else []:
        start = time.monotonic()
        try:
            info = _compile(module, kernel, request["arch"], request["max_shared_bytes"], workdir)
        except PermissionError as exc:  # the sandbox refused the compiler a file: the environment's, flagged as such
            info = {"ok": False, "sandbox_refused": True, "error": f"the compile worker's sandbox refused: {exc}"}
        except Exception as exc:  # one kernel's failure is that kernel's result
            lines = [l for l in traceback.format_exception_only(type(exc), exc) if l.strip()]
            info = {"ok": False, "error": (f"does not compile for sm_{request['arch']} (a kernel body may use only "
                                           "triton.language, constants and other @triton.jit functions): "
                                           + "".join(lines).strip()[-1500:])}
        info.update(kernel=kernel["name"], seconds=round(time.monotonic() - start, 3))
        results.append(info)
    with open(result_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
