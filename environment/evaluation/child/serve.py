"""The child side of an evaluation: load a module in the sandbox, run it on the inputs it is sent,
and send back bytes. It never sees a reference output, a secret or a verdict. (The reference's child
alone is sent one seed: the GPU-shape inputs' own, derived for them, to make those inputs itself
rather than be sent their bytes; the values it would otherwise receive say as much.)

The same loop serves the candidate (``ModelNew``) and the reference (``Model``), so both are run,
timed and transported the same way.
"""
from __future__ import annotations

import contextlib
import copy
import gc
import hashlib
import json
import os
import tempfile
import sys
import time
import traceback
import types
from typing import Any, NoReturn, Optional

import torch
from pydantic import ValidationError

from environment.evaluation.child import fallback_guard, gpu_numerics, outputs
from environment.evaluation.static import runtime_features
from environment.evaluation.transport import frames, sandbox
from environment.evaluation.child.launches import LaunchCounter
from environment.evaluation.evaluator.inputs import fingerprint, geometry, planned_inputs
from environment.evaluation.transport.protocol import (COMMAND, NOT_PLAIN, Count, Counted, Digest, Digested, Exit, Fetch,
                                                       Fetched, Job, Loaded, Pick, Ran, Reply, ReplayJob, Run, Stage, Staged,
                                                       Time, Timed, TraceCall, Traced, Unknown)


def _fmt_exc(exc: BaseException, filename: str) -> str:
    frames_ = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {frames_[-1].lineno}: `{(frames_[-1].line or '').strip()}`)" if frames_ else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _exc_line(exc: BaseException, filename: str) -> Optional[int]:
    """The submission line where ``exc`` was raised (innermost frame in the submission), if any."""
    frames_ = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if frames_ and frames_[-1].lineno:
        return frames_[-1].lineno
    if isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno and exc.lineno > 0:
        return exc.lineno
    return None


def _digest(tensors: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(frames.tensor_bytes(t))
    return h.hexdigest()


def _outputs(out: Any) -> tuple[list[torch.Tensor], bool]:
    items, plain, _ = outputs.classify(out)
    return items, plain


def _not_plain(out: Any) -> str:
    """The error for a result that is no plain tensor: a wrong answer's own message when it is a plain value."""
    returned = outputs.classify(out)[2]
    return outputs.wrong_output_message(returned) if returned else NOT_PLAIN


def _close_other_fds(keep: set[int]) -> None:
    for fd in map(int, os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else range(3, 256):
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


CHILD_FAILED = 70  # exit status of a child whose own loop failed (e.g. its channel was closed under it)


def _read_job(nonce: str, cmd_fd: int) -> tuple[Job, list[Any]]:
    """The job and its constructor arguments (tensors sent beside the header put back in place)."""
    header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
    job = Job.model_validate(header)
    init = [tensors[a["__tensor__"]] if isinstance(a, dict) and "__tensor__" in a else a for a in job.init_args]
    return job, init


def child_main(nonce: str, cmd_fd: int, res_fd: int) -> NoReturn:
    """Entry point right after fork: wait for the job, then serve commands. Never returns."""
    serve_then_exit(lambda: _run(*_read_job(nonce, cmd_fd), cmd_fd, res_fd))


def serve_then_exit(serve) -> NoReturn:
    """Run a child's whole life, then leave without Python's shutdown (a forked child must not run
    its parent's exit handlers). A failure of the loop itself: the evaluator sees a closed channel
    and the log."""
    code = 0
    try:
        serve()
    except frames.ClosedIdle:  # nothing more to do (or nothing ever came): an ending, not a failure to log
        code = CHILD_FAILED
    except BaseException:
        traceback.print_exc()
        code = CHILD_FAILED
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def send_reply(res_fd: int, reply: Reply, tensors: list[torch.Tensor] = ()) -> None:
    frames.write_frame(res_fd, frames.encode(reply.model_dump(mode="json"), list(tensors)))


def enter_child(tmpdir: str, cmd_fd: int, res_fd: int) -> None:
    """Redirect output to the log, keep only the two channels open and move into the temp dir."""
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
    tempfile.tempdir = tmpdir  # tempfile caches the zygote's choice (/tmp); Triton's compiler writes there
    os.environ["TRITON_CACHE_DIR"] = os.path.join(tmpdir, "triton-cache")  # the only writable place
    os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(tmpdir, "torch-extensions")  # load_inline builds (CUDA hosts)


def enter_sandbox(job: Job | ReplayJob) -> dict[str, Any]:
    """Apply rlimits, Landlock and seccomp; returns the layers applied. A layer the host refuses
    (an older kernel, a container's own seccomp policy) is reported and flagged as degraded rather
    than taking the whole service down; the others still stand."""
    limits = job.limits
    sandbox.scrub_environment()
    # CUDA hosts: the driver reserves tens of GiB of address space, so private writable memory is capped
    # instead, four times as high: the driver's own host buffers and GPU-sized inputs arriving by frame
    cuda = job.backend == "cuda"
    base = sandbox.current_vm_bytes("VmData" if cuda else "VmSize")
    sandbox.apply_rlimits(base + limits.memory_mb * 2**20 * (4 if cuda else 1) if limits.memory_mb else None,
                          limits.cpu_seconds, limits.max_file_mb * 2**20, data_only=cuda)
    layers: dict[str, Any] = {"landlock": 0, "seccomp": False}
    if limits.landlock:
        try:
            layers["landlock"] = sandbox.apply_landlock(sandbox.read_only_roots(),
                                                        [job.tmpdir, *(sandbox.cuda_writable() if cuda else ())],
                                                        sandbox.exec_roots(), sandbox.device_nodes())
        except OSError as exc:
            layers["landlock_error"] = str(exc)
    if limits.seccomp:
        try:
            layers["seccomp"] = sandbox.apply_seccomp(allow_threads=cuda, allow_exec=cuda, unix_sockets=cuda)
        except Exception as exc:  # pyseccomp raises RuntimeError/OSError when the filter cannot load
            layers["seccomp_error"] = f"{type(exc).__name__}: {exc}"
    return layers


def _run(job: Job, init_args: list[Any], cmd_fd: int, res_fd: int) -> None:
    nonce = job.nonce
    enter_child(job.tmpdir, cmd_fd, res_fd)
    source_path = os.path.join(job.tmpdir, "submission.py")
    with open(source_path, "w") as fh:
        fh.write(job.source)

    if job.backend == "cpu":  # before the sandbox: these read files outside the child's reach
        from environment.evaluation.modeled import autotune, counting  # noqa: F401
        from environment.evaluation.replay import recorder
        autotune.install(tolerance=job.tolerance)  # multi-config autotune picks by modeled time
        recorder.install()
        gpu_numerics.install()  # tl.dot rounds as sm_90 does; trials can shuffle programs and find races
        global _JUDGED_CALLS_RECORDED
        _JUDGED_CALLS_RECORDED = job.class_name == "ModelNew"

    layers = enter_sandbox(job)
    audit_events: list[str] = []
    sandbox.install_audit_tripwire(audit_events.append)

    runtime_features.install_guards(torch)  # torch.compile, thread counts: a named error, not a seccomp kill
    module = types.ModuleType("submission")
    module.__file__ = source_path
    sys.modules["submission"] = module
    try:
        if job.class_name == "ModelNew":  # swallowed exceptions are found at run time too
            code, guards = fallback_guard.compile_guarded(job.source, source_path)
            module.__dict__.update(guards)
        else:
            code = compile(job.source, source_path, "exec")
        exec(code, module.__dict__)
        cls = getattr(module, job.class_name)
        torch.manual_seed(job.init_seed)
        models = {}

        def build(init: list) -> Any:
            """One model per constructor arguments, each built under the same seed as the reference."""
            key = json.dumps(init, default=id)
            if key not in models:
                torch.manual_seed(job.init_seed)
                models[key] = cls(*init)
                if isinstance(models[key], torch.nn.Module) and not job.train_mode:
                    models[key].eval()
            return models[key]

        build(init_args)
    except BaseException as exc:  # the submission's fault: report it as data
        send_reply(res_fd, Loaded(kind="loaded", nonce=nonce, ok=False, error=_fmt_exc(exc, source_path),
                                  line=_exc_line(exc, source_path), layers=layers))
        return
    send_reply(res_fd, Loaded(kind="loaded", nonce=nonce, ok=True, layers=layers))

    device = torch.device(job.device)
    staged: list[list[torch.Tensor]] = []
    staged_model = None
    timed_outputs: list[list[torch.Tensor]] = []
    kept: list[torch.Tensor] = []      # the outputs of the last planned Count (the GPU-shape run), for Pick
    while True:
        header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 3600)
        try:
            cmd = COMMAND.validate_python(header)
        except ValidationError as exc:
            send_reply(res_fd, Unknown(kind="error", nonce=nonce, ok=False, error=f"unknown command: {exc.errors()[0]}"))
            continue
        if isinstance(cmd, Exit):
            return
        try:
            model = build(cmd.init) if cmd.init is not None else build(init_args)
            if isinstance(cmd, Run):
                reply, out = _cmd_run(model, cmd, tensors, device, audit_events)
                send_reply(res_fd, reply, out)
            elif isinstance(cmd, Stage):
                staged = [[t.to(device) for t in tensors[i:i + cmd.arity]] for i in range(0, len(tensors), cmd.arity)]
                timed_outputs, staged_model = [], model
                send_reply(res_fd, Staged(kind="staged", nonce=nonce, ok=True, sets=len(staged)))
            elif isinstance(cmd, Time):
                # no collection from here to the digest: a finalizer the timed call's garbage holds cannot run
                # between the timed reply and the hash (it would fill the outputs off the clock); it runs after
                gc.disable()
                timed_outputs, elapsed = _cmd_time(staged_model, staged, device, cmd.skip_model)
                send_reply(res_fd, Timed(kind="timed", nonce=nonce, ok=True, elapsed_s=elapsed))
            elif isinstance(cmd, Digest):
                # asked right after Timed, off the clock: the digests bind the outputs as the timed call left
                # them (the device synchronised), so the work cannot be moved to "fetch"
                digests = [_digest(o) for o in timed_outputs]
                gc.enable()
                send_reply(res_fd, Digested(kind="digested", nonce=nonce, ok=True, digests=digests))
            elif isinstance(cmd, Fetch):
                send_reply(res_fd, Fetched(kind="fetched", nonce=nonce, ok=True), timed_outputs[cmd.index])
            elif isinstance(cmd, Count) and cmd.plan is not None:  # the reference only: inputs made here
                kept = []
                reply, kept = _cmd_count(model, planned_inputs(cmd.plan), device, planned=True)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}))
            elif isinstance(cmd, Count):  # the reference only: its own process, trusted task code
                reply, out = _cmd_count(model, tensors, device)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}), out)
            elif isinstance(cmd, Pick):
                send_reply(res_fd, Fetched(kind="picked", nonce=nonce, ok=True), _pick(kept, tensors))
            elif isinstance(cmd, TraceCall):  # the candidate: a claim of what it did, replayed elsewhere
                reply, out = _cmd_trace(model, tensors, device, cmd.geometry)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}), out)
        except BaseException as exc:
            send_reply(res_fd, _failure(cmd.cmd, nonce, _fmt_exc(exc, source_path)))


_REPLY_OF = {"run": Ran, "stage": Staged, "time": Timed, "digest": Digested, "fetch": Fetched, "count": Counted,
             "trace": Traced, "pick": Fetched}


def _failure(cmd: str, nonce: str, error: str) -> Reply:
    return _REPLY_OF[cmd](kind=cmd, nonce=nonce, ok=False, error=error)


def _cmd_count(model, tensors, device, planned: bool = False):
    """The counted call; planned: on inputs made here (their geometry and fingerprint in the reply),
    the outputs kept here, only their geometry sent."""
    from environment.evaluation.modeled.counting import CostCounter
    extra = {"inputs": geometry(tensors), "fingerprint": fingerprint(tensors)} if planned else {}
    inputs = [t.to(device) for t in tensors]
    counter = CostCounter()
    start = time.perf_counter()
    with torch.no_grad(), counter:
        out = model(*inputs)
    compute = time.perf_counter() - start
    items, _ = _outputs(out)
    items = [t.detach().to("cpu") for t in items]
    if planned:
        extra["kept"] = geometry(items)
    return (Counted(kind="counted", nonce="", ok=True, report=counter.report(outputs=items), compute_s=compute,
                    **extra), items)


def _pick(kept: list[torch.Tensor], indices: list[torch.Tensor]) -> list[torch.Tensor]:
    """The kept outputs' values at the flat positions given (one int64 index tensor per output, for the
    first len(indices) outputs)."""
    if len(indices) > len(kept):
        raise ValueError(f"{len(indices)} index tensor(s) for {len(kept)} kept output(s)")
    for index, out in zip(indices, kept):
        if index.dtype != torch.int64 or index.dim() != 1 or (index.numel() and (
                int(index.min()) < 0 or int(index.max()) >= out.numel())):
            raise ValueError("an index tensor is not int64 flat positions inside its output")
    return [out.reshape(-1)[index] for index, out in zip(indices, kept)]


def _judged_call(model, args: list[torch.Tensor], device, order_seed=None, recorder=None):
    """One call of forward as every judged call of the candidate makes it: launches counted, races
    and swallowed exceptions recorded, under a trace recorder that runs its launches (a trial's trace
    is dropped, the counted call's priced): the priced call looks like any other judged call.
    Returns (output, launch counter, numerics report, swallowed exceptions)."""
    from environment.evaluation.replay.recorder import TraceRecorder
    recorder = recorder if recorder is not None else (
        TraceRecorder(args, run_launches=True) if _JUDGED_CALLS_RECORDED else contextlib.nullcontext())
    fallback_guard.RECORDER.begin()
    try:
        with torch.no_grad(), LaunchCounter() as counter, gpu_numerics.trial(order_seed) as numerics, recorder:
            out = model(*args)
            _sync(device)
    finally:
        swallowed = fallback_guard.RECORDER.end()
    return out, counter, numerics, swallowed


_JUDGED_CALLS_RECORDED = False   # set in the candidate's child (CPU hosts), where the counted call is traced


def _cmd_trace(model, tensors, device, geometry=None):
    """Run the forward once under the trace recorder; send the outputs, then the constants. The
    launches run and the call is made as a trial's (`_judged_call`): its outputs are judged. With
    `geometry`, on zero-filled inputs of those shapes (the GPU-shape trace), launches recorded and not
    run, sending only the constants."""
    from environment.evaluation.replay.recorder import TraceRecorder
    if geometry is not None:
        dtypes = [getattr(torch, name, None) for _, name in geometry]
        if not all(isinstance(d, torch.dtype) for d in dtypes):
            raise ValueError("unknown dtype in the trace geometry")
        tensors = [torch.zeros(shape, dtype=d) for (shape, _), d in zip(geometry, dtypes)]
    inputs = [t.to(device) for t in tensors]
    start = time.perf_counter()
    if geometry is not None:
        with torch.no_grad(), TraceRecorder(inputs) as recorder:
            out = model(*inputs)
    else:
        recorder = TraceRecorder(inputs, run_launches=True)
        out = _judged_call(model, inputs, device, recorder=recorder)[0]
    compute = time.perf_counter() - start
    items, plain = _outputs(out)
    if not plain:
        return Traced(kind="traced", nonce="", ok=False, error=_not_plain(out)), []
    trace, constants = recorder.finish(items)
    if geometry is not None:
        return Traced(kind="traced", nonce="", ok=True, trace=trace, outputs=0, compute_s=compute), constants
    return (Traced(kind="traced", nonce="", ok=True, trace=trace, outputs=len(items), compute_s=compute),
            [t.detach().to("cpu") for t in items] + constants)


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


def _cmd_run(model, cmd: Run, tensors, device, audit_events):
    """Run the forward `repeat` times on fresh copies of the same inputs (determinism) and report
    the outputs, whether the inputs were written to, and the Triton launches of the first run.
    float64: run a float64 copy of the model (the reference's oracle). order_seed: launches run
    their programs in that order (CPU hosts). Also reported: stores two programs raced on, and
    exceptions that were raised inside the call and swallowed."""
    if cmd.float64:
        model, tensors = _float64(model, tensors)
    inputs = [t.to(device) for t in tensors]
    digest_before = _digest(inputs)
    outs: list[torch.Tensor] = []
    launches: dict[str, int] = {}
    plain_all, mutated, n_out, compute, returned = True, False, 0, 0.0, None
    races: list[str] = []
    swallowed: list[str] = []
    for rep in range(cmd.repeat):
        args = [t.clone() for t in inputs]
        start = time.perf_counter()
        out, counter, numerics, caught = _judged_call(model, args, device, cmd.order_seed)
        swallowed += caught
        compute += time.perf_counter() - start
        races += numerics.races
        items, plain, returned = outputs.classify(out)
        plain_all &= plain
        if not plain:
            break
        mutated |= _digest(args) != digest_before
        if rep == 0:
            launches, n_out = dict(counter.counts), len(items)
        outs.extend(t.detach().to("cpu") for t in items)
    return (Ran(kind="ran", nonce=cmd.nonce, ok=True, plain=plain_all, returned=returned, mutated=mutated,
                launches=launches, outputs=n_out, audit=list(audit_events), compute_s=compute, races=races[:5],
                swallowed=swallowed[:5]),
            outs if plain_all else [])


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
    timed = [_outputs(o) for o in outs]
    for out, (_, plain) in zip(outs, timed):  # a stand-in would do its work when the Digest step reads it (a151)
        if not plain:
            raise TypeError(_not_plain(out))
    return [items for items, _ in timed], (hint if cuda else elapsed)
