"""The child side of an evaluation: load a module in the sandbox, run it on the inputs it is sent,
and send back bytes. It never sees a reference output, a secret or a verdict.

The same loop serves the candidate (``ModelNew``) and the reference (``Model``), so both are run,
timed and transported the same way.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
import time
import traceback
import types
from typing import Any, NoReturn

import torch

from environment.evaluation import fallback_guard, frames, gpu_numerics, sandbox
from environment.evaluation.launches import LaunchCounter


def _fmt_exc(exc: BaseException, filename: str) -> str:
    frames_ = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {frames_[-1].lineno}: `{(frames_[-1].line or '').strip()}`)" if frames_ else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _digest(tensors: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(frames.tensor_bytes(t))
    return h.hexdigest()


def _outputs(out: Any) -> tuple[list[torch.Tensor], bool]:
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    plain = all(type(t) is torch.Tensor for t in items)
    if plain:
        plain = all(t.untyped_storage().nbytes() >= 0 and not t.is_meta for t in items)
    return items, plain


def _close_other_fds(keep: set[int]) -> None:
    for fd in map(int, os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else range(3, 256):
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


CHILD_FAILED = 70  # exit status of a child whose own loop failed (e.g. its channel was closed under it)


def _read_job(nonce: str, cmd_fd: int) -> dict[str, Any]:
    header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
    header["init_args"] = [tensors[a["__tensor__"]] if isinstance(a, dict) and "__tensor__" in a else a
                           for a in header["init_args"]]
    return header


def child_main(nonce: str, cmd_fd: int, res_fd: int) -> NoReturn:
    """Entry point right after fork: wait for the job, then serve commands. Never returns."""
    code = 0
    try:
        _run(_read_job(nonce, cmd_fd), cmd_fd, res_fd)
    except BaseException:  # the child's own failure: the evaluator sees a closed channel and the log
        traceback.print_exc()
        code = CHILD_FAILED
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _send(res_fd: int, nonce: str, header: dict[str, Any], tensors: list[torch.Tensor] = ()) -> None:
    frames.write_frame(res_fd, frames.encode(dict(header, nonce=nonce), list(tensors)))


def _run(job: dict[str, Any], cmd_fd: int, res_fd: int) -> None:
    tmpdir, nonce = job["tmpdir"], job["nonce"]
    log_fd = os.open(os.path.join(tmpdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    _close_other_fds({cmd_fd, res_fd})
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    os.chdir(tmpdir)
    os.environ["TMPDIR"] = tmpdir
    os.environ["TRITON_CACHE_DIR"] = os.path.join(tmpdir, "triton-cache")  # the only writable place
    source_path = os.path.join(tmpdir, "submission.py")
    with open(source_path, "w") as fh:
        fh.write(job["source"])

    if job["backend"] == "cpu":  # before the sandbox: these read files outside the child's reach
        from environment.evaluation.modeled import autotune, counting  # noqa: F401
        autotune.install(tolerance=job.get("tolerance"))  # multi-config autotune picks by modeled time
        gpu_numerics.install()  # tl.dot rounds as sm_90 does; trials can shuffle programs and find races

    limits = job["limits"]
    sandbox.scrub_environment()
    sandbox.apply_rlimits(sandbox.current_vm_bytes() + limits["memory_mb"] * 2**20 if limits["memory_mb"] else None,
                          limits["cpu_seconds"], limits["max_file_mb"] * 2**20)
    audit_events: list[str] = []
    layers: dict[str, Any] = {"landlock": 0, "seccomp": False}
    # A layer the host refuses (an older kernel, a container's own seccomp policy) is reported and
    # flagged as degraded rather than taking the whole service down; the others still stand.
    if limits.get("landlock"):
        try:
            layers["landlock"] = sandbox.apply_landlock(sandbox.read_only_roots(), [tmpdir], sandbox.exec_roots())
        except OSError as exc:
            layers["landlock_error"] = str(exc)
    if limits.get("seccomp"):
        try:
            layers["seccomp"] = sandbox.apply_seccomp(allow_threads=job["backend"] == "cuda",
                                                      allow_exec=job["backend"] == "cuda")
        except Exception as exc:  # pyseccomp raises RuntimeError/OSError when the filter cannot load
            layers["seccomp_error"] = f"{type(exc).__name__}: {exc}"
    sandbox.install_audit_tripwire(audit_events.append)

    module = types.ModuleType("submission")
    module.__file__ = source_path
    sys.modules["submission"] = module
    try:
        if job["class_name"] == "ModelNew":  # swallowed exceptions are found at run time too
            code, guards = fallback_guard.compile_guarded(job["source"], source_path)
            module.__dict__.update(guards)
        else:
            code = compile(job["source"], source_path, "exec")
        exec(code, module.__dict__)
        cls = getattr(module, job["class_name"])
        torch.manual_seed(job["init_seed"])
        models = {}

        def build(init: list) -> Any:
            """One model per constructor arguments, each built under the same seed as the reference."""
            key = json.dumps(init)
            if key not in models:
                torch.manual_seed(job["init_seed"])
                models[key] = cls(*init)
                if isinstance(models[key], torch.nn.Module):
                    models[key].eval()
            return models[key]

        build(job["init_args"])
    except BaseException as exc:  # the submission's fault: report it as data
        _send(res_fd, nonce, {"kind": "loaded", "ok": False, "error": _fmt_exc(exc, source_path), "layers": layers})
        return
    _send(res_fd, nonce, {"kind": "loaded", "ok": True, "layers": layers})

    device = torch.device(job["device"])
    staged: list[list[torch.Tensor]] = []
    staged_model = None
    timed_outputs: list[list[torch.Tensor]] = []
    while True:
        header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 3600)
        cmd = header.get("cmd")
        if cmd == "exit":
            return
        try:
            model = build(header["init"]) if isinstance(header.get("init"), list) else build(job["init_args"])
            if cmd == "run":
                _send(res_fd, nonce, *_cmd_run(model, header, tensors, device, audit_events, source_path))
            elif cmd == "stage":
                arity = int(header["arity"])
                staged = [[t.to(device) for t in tensors[i:i + arity]] for i in range(0, len(tensors), arity)]
                timed_outputs, staged_model = [], model
                _send(res_fd, nonce, {"kind": "staged", "ok": True, "sets": len(staged)})
            elif cmd == "time":
                timed_outputs, elapsed = _cmd_time(staged_model, staged, device, bool(header.get("skip_model")))
                # digests bind the outputs to this timed call: the work cannot be moved to "fetch"
                _send(res_fd, nonce, {"kind": "timed", "ok": True, "elapsed_s": elapsed,
                                      "digests": [_digest(o) for o in timed_outputs]})
            elif cmd == "fetch":
                _send(res_fd, nonce, {"kind": "fetched", "ok": True}, timed_outputs[int(header["index"])])
            elif cmd == "count":
                from environment.evaluation.modeled.counting import CostCounter
                inputs = [t.to(device) for t in tensors]
                counter = CostCounter()
                start = time.perf_counter()
                with torch.no_grad(), counter:
                    out = model(*inputs)
                compute = time.perf_counter() - start
                items, _ = _outputs(out)
                _send(res_fd, nonce, {"kind": "counted", "ok": True, "report": counter.report(outputs=items),
                                      "compute_s": compute}, [t.detach().to("cpu") for t in items])
            else:
                _send(res_fd, nonce, {"kind": "error", "ok": False, "error": f"unknown command {cmd!r}"})
        except BaseException as exc:
            _send(res_fd, nonce, {"kind": cmd, "ok": False, "error": _fmt_exc(exc, source_path)})


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


_FLOAT64_MODELS: dict[int, Any] = {}


def _float64(model, tensors: list[torch.Tensor]) -> tuple[Any, list[torch.Tensor]]:
    """The reference as a float64 oracle: a float64 copy of the model (same weights) and inputs."""
    if id(model) not in _FLOAT64_MODELS:
        copied = copy.deepcopy(model)
        _FLOAT64_MODELS[id(model)] = copied.double() if isinstance(copied, torch.nn.Module) else copied
    return _FLOAT64_MODELS[id(model)], [t.double() if t.is_floating_point() else t for t in tensors]


def _cmd_run(model, header, tensors, device, audit_events, source_path):
    """Run the forward `repeat` times on fresh copies of the same inputs (determinism) and report
    the outputs, whether the inputs were written to, and the Triton launches of the first run.
    float64: run a float64 copy of the model (the reference's oracle). order_seed: launches run
    their programs in that order (CPU hosts). Also reported: stores two programs raced on, and
    exceptions that were raised inside the call and swallowed."""
    if header.get("float64"):
        model, tensors = _float64(model, tensors)
    inputs = [t.to(device) for t in tensors]
    digest_before = _digest(inputs)
    outs: list[torch.Tensor] = []
    launches: dict[str, int] = {}
    plain_all, mutated, n_out, compute = True, False, 0, 0.0
    races: list[str] = []
    swallowed: list[str] = []
    order_seed = header.get("order_seed")
    for rep in range(int(header.get("repeat", 1))):
        args = [t.clone() for t in inputs]
        fallback_guard.RECORDER.begin()
        start = time.perf_counter()
        try:
            with torch.no_grad(), LaunchCounter() as counter, \
                    gpu_numerics.trial(order_seed if isinstance(order_seed, int) else None) as numerics:
                out = model(*args)
                _sync(device)
        finally:
            swallowed += fallback_guard.RECORDER.end()
        compute += time.perf_counter() - start
        races += numerics.races
        items, plain = _outputs(out)
        plain_all &= plain
        if not plain:
            break
        mutated |= _digest(args) != digest_before
        if rep == 0:
            launches, n_out = dict(counter.counts), len(items)
        outs.extend(t.detach().to("cpu") for t in items)
    return ({"kind": "ran", "ok": True, "plain": plain_all, "mutated": mutated, "launches": launches,
             "outputs": n_out, "audit": list(audit_events), "compute_s": compute, "races": races[:5],
             "swallowed": swallowed[:5]}, outs if plain_all else [])


def _cmd_time(model, staged, device, skip_model: bool = False):
    """Run each staged input set once; with skip_model, the same loop without the model (the
    evaluator's baseline for the loop, flush and channel costs). On CUDA the L2 is flushed before
    every call (we care about cold-cache performance) and the device synchronised after it; CUDA
    events give the evaluator a finer hint, its own clock stays the timing of record."""
    outs = []
    cuda = device.type == "cuda"
    flush = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device=device) if cuda else None
    hint = 0.0
    start = time.perf_counter()
    with torch.no_grad():
        for args in staged:
            if cuda:
                flush.zero_()
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
            if not skip_model:
                outs.append(model(*args))
            if cuda:
                torch.cuda.synchronize()
                end.record()
                end.synchronize()
                hint += begin.elapsed_time(end) / 1e3
    elapsed = time.perf_counter() - start
    return [_outputs(o)[0] for o in outs], (hint if cuda else elapsed)
