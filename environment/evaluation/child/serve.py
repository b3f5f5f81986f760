"""The child side of an evaluation: load a module in the sandbox, run it on the inputs it is sent,
and send back bytes. It never sees a reference output, a secret or a verdict. (The reference's child
alone is sent one seed: the GPU-shape inputs' own, derived for them, to make those inputs itself
rather than be sent their bytes; the values it would otherwise receive say as much.)

The same loop serves the candidate (``ModelNew``) and the reference (``Model``), so both are run,
timed and transported the same way. What each command does is in commands.py; entering the child and
its sandbox, and leaving it, in lifecycle.py.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
import types
from typing import Any, NoReturn, Optional

import torch
from pydantic import ValidationError

from environment.evaluation.child import commands, fallback_guard, gpu_numerics
from environment.evaluation.child.lifecycle import enter_child, enter_sandbox, send_reply, serve_then_exit
from environment.evaluation.evaluator.inputs import planned_inputs
from environment.evaluation.static import runtime_features
from environment.evaluation.transport import frames, sandbox
from environment.evaluation.transport.protocol import (COMMAND, Count, Counted, Digest, Digested, Exit, Fetch, Fetched,
                                                       Job, Loaded, Pick, Ran, Reply, Run, Stage, Staged, Time, Timed,
                                                       TraceCall, Traced, Unknown)


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


def _read_job(nonce: str, cmd_fd: int) -> tuple[Job, list[Any]]:
    """The job and its constructor arguments (tensors sent beside the header put back in place)."""
    header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
    job = Job.model_validate(header)
    init = [tensors[a["__tensor__"]] if isinstance(a, dict) and "__tensor__" in a else a for a in job.init_args]
    return job, init


def child_main(nonce: str, cmd_fd: int, res_fd: int) -> NoReturn:
    """Entry point right after fork: wait for the job, then serve commands. Never returns."""
    serve_then_exit(lambda: _run(*_read_job(nonce, cmd_fd), cmd_fd, res_fd))


def _run(job: Job, init_args: list[Any], cmd_fd: int, res_fd: int) -> None:
    nonce = job.nonce
    enter_child(job.tmpdir, cmd_fd, res_fd)
    source_path = os.path.join(job.tmpdir, "submission.py")
    with open(source_path, "w") as fh:
        fh.write(job.source)

    if job.backend == "cpu":  # before the sandbox: these read files outside the child's reach
        from environment.evaluation.child import autotune
        from environment.evaluation.modeled import counting  # noqa: F401
        from environment.evaluation.replay import recorder
        autotune.install(tolerance=job.tolerance)  # multi-config autotune picks by modeled time
        recorder.install()
        gpu_numerics.install()  # tl.dot rounds as sm_90 does; trials can shuffle programs and find races
        commands.JUDGED_CALLS_RECORDED = job.class_name == "ModelNew"

    layers = enter_sandbox(job)
    audit_events: list[str] = []
    sandbox.install_audit_tripwire(audit_events.append)

    # torch.compile, thread counts: a named error, not a seccomp kill; CPU matmuls stay fp32 on CPU hosts
    runtime_features.install_guards(torch, cpu_host=job.backend == "cpu")
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
                reply, out = commands.cmd_run(model, cmd, tensors, device, audit_events)
                send_reply(res_fd, reply, out)
            elif isinstance(cmd, Stage):
                staged = [[t.to(device) for t in tensors[i:i + cmd.arity]] for i in range(0, len(tensors), cmd.arity)]
                timed_outputs, staged_model = [], model
                send_reply(res_fd, Staged(kind="staged", nonce=nonce, ok=True, sets=len(staged)))
            elif isinstance(cmd, Time):
                # no collection from here to the digest: a finalizer the timed call's garbage holds cannot run
                # between the timed reply and the hash (it would fill the outputs off the clock); it runs after
                gc.disable()
                timed_outputs, elapsed = commands.cmd_time(staged_model, staged, device, cmd.skip_model)
                send_reply(res_fd, Timed(kind="timed", nonce=nonce, ok=True, elapsed_s=elapsed))
            elif isinstance(cmd, Digest):
                # asked right after Timed, off the clock: the digests bind the outputs as the timed call left
                # them (the device synchronised), so the work cannot be moved to "fetch"
                digests = [commands.digest(o) for o in timed_outputs]
                gc.enable()
                send_reply(res_fd, Digested(kind="digested", nonce=nonce, ok=True, digests=digests))
            elif isinstance(cmd, Fetch):
                send_reply(res_fd, Fetched(kind="fetched", nonce=nonce, ok=True), timed_outputs[cmd.index])
            elif isinstance(cmd, Count) and cmd.plan is not None:  # the reference only: inputs made here
                kept = []
                reply, kept = commands.cmd_count(model, planned_inputs(cmd.plan), device, planned=True)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}))
            elif isinstance(cmd, Count):  # the reference only: its own process, trusted task code
                reply, out = commands.cmd_count(model, tensors, device)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}), out)
            elif isinstance(cmd, Pick):
                send_reply(res_fd, Fetched(kind="picked", nonce=nonce, ok=True), commands.pick(kept, tensors))
            elif isinstance(cmd, TraceCall):  # the candidate: a claim of what it did, replayed elsewhere
                reply, out = commands.cmd_trace(model, tensors, device, cmd.geometry)
                send_reply(res_fd, reply.model_copy(update={"nonce": nonce}), out)
        except BaseException as exc:
            send_reply(res_fd, _failure(cmd.cmd, nonce, _fmt_exc(exc, source_path)))


_REPLY_OF = {"run": Ran, "stage": Staged, "time": Timed, "digest": Digested, "fetch": Fetched, "count": Counted,
             "trace": Traced, "pick": Fetched}


def _failure(cmd: str, nonce: str, error: str) -> Reply:
    return _REPLY_OF[cmd](kind=cmd, nonce=nonce, ok=False, error=error)
