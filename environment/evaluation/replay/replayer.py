"""The replayer: a sandboxed process that re-executes a candidate's trace and counts it.

Forked from the evaluator before the evaluator reads its request (like the candidate and reference
children), so it inherits no seed, no source and no other session's data. It never imports the
submission: its kernels come from the module rebuild.py generated from the submission's syntax
tree, written into its own temp dir. Its job frame carries that module, the trace, the held-out
inputs (values the candidate never saw) and the candidate's constant tensors; it answers with the
counted launch records and the replay's outputs. The evaluator decides what they are worth.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback
from typing import NoReturn

import torch

from environment.evaluation import frames
from environment.evaluation.child import CHILD_FAILED, enter_child, enter_sandbox


def replayer_main(nonce: str, cmd_fd: int, res_fd: int) -> NoReturn:
    code = 0
    try:
        header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
        _serve(header, tensors, cmd_fd, res_fd, nonce)
    except BaseException:
        traceback.print_exc()
        code = CHILD_FAILED
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _send(res_fd: int, nonce: str, header: dict, tensors=()) -> None:
    frames.write_frame(res_fd, frames.encode(dict(header, nonce=nonce), list(tensors)))


def _serve(job: dict, tensors: list[torch.Tensor], cmd_fd: int, res_fd: int, nonce: str) -> None:
    enter_child(job, cmd_fd, res_fd)
    from environment.evaluation.modeled import triton_hooks
    from environment.evaluation.modeled.counting import CostCounter
    from environment.evaluation.replay.execute import Replay, ReplayError
    from environment.evaluation.replay.trace import Trace

    triton_hooks.install()  # before the sandbox: it imports the interpreter
    path = os.path.join(job["tmpdir"], f"kernels_{job['digest'][:16]}.py")
    with open(path, "w") as fh:
        fh.write(job["module"])
    layers = enter_sandbox(job)
    try:
        trace = Trace.model_validate(job["trace"])
        n_inputs = int(job["inputs"])
        spec = importlib.util.spec_from_file_location(f"kernels_{job['digest'][:16]}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # generated code: imports, literals and @triton.jit definitions
        counter = CostCounter()
        replay = Replay(trace, tensors[:n_inputs], tensors[n_inputs:], module, list(job["kernels"]), counter)
        start = time.perf_counter()
        with torch.no_grad(), counter:
            outputs = replay.run()
        report = counter.report(outputs=outputs)
        _send(res_fd, nonce, {"kind": "replayed", "ok": True, "report": report, "layers": layers,
                              "compute_s": time.perf_counter() - start}, outputs)
    except ReplayError as exc:
        _send(res_fd, nonce, {"kind": "replayed", "ok": False, "error": str(exc), "layers": layers})
    except Exception as exc:  # the rebuilt kernels failed to import or the replay broke
        _send(res_fd, nonce, {"kind": "replayed", "ok": False, "layers": layers,
                              "error": f"{type(exc).__name__}: {str(exc)[:500]}"})
