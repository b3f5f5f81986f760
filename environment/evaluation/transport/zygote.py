"""The warm zygote: a process that has imported torch, triton and the harness once and forks one
evaluator per request (ready in milliseconds instead of a ~1 s interpreter start).

It never runs a multi-threaded op (forked children would hang on OpenMP), never runs candidate
code, and kills each evaluation's whole process group when it ends. As a child subreaper it also
collects grandchildren that escaped the group.
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from environment.evaluation.transport import frames
from environment.evaluation.transport.sandbox import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, prctl, probe_layers

if TYPE_CHECKING:
    from environment.evaluation.transport.request import EvalRequest


def _warm_up(backend: str) -> None:
    import io

    import torch
    import triton
    import triton.language as tl

    torch.set_num_threads(1)

    @triton.jit
    def _add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    # Never touch CUDA here: a CUDA context does not survive fork, so each child initialises its own.
    x = torch.zeros(64)
    if backend == "cpu":
        _add[(1,)](x, torch.empty_like(x), 64, BLOCK=64)
    torch.save(x, io.BytesIO())
    torch.nn.functional.gelu(x + 1)
    # Everything an evaluator and its children import, so no fork pays for (or races with) an import.
    import environment.evaluation.child.serve  # noqa: F401
    import environment.evaluation.evaluator.pipeline  # noqa: F401
    import environment.evaluation.evaluator.performance  # noqa: F401
    import environment.evaluation.replay.replayer  # noqa: F401
    import environment.evaluation.transport.request  # noqa: F401
    import environment.config  # noqa: F401
    import environment.tasks.task  # noqa: F401
    if backend == "cpu":
        from environment.evaluation.evaluator.modeled_speed import run_self_test
        from environment.evaluation.child import autotune  # noqa: F401
        from environment.evaluation.modeled import aot, gates, model  # noqa: F401
        model.load_spec()  # parsed once here: every evaluator inherits it
        ok, detail = run_self_test()
        print(f"[zygote] modeled-time self-test: {'ok' if ok else 'FAILED: ' + detail}", file=sys.stderr)


def _reap_orphans() -> None:
    """Kill and collect any process reparented to us (an escapee from a swept process group)."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            try:
                os.kill(int(stat.parent.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _evaluate_in_child(request: EvalRequest, out_fd: int, children) -> None:
    from environment.evaluation.evaluator.pipeline import Evaluation

    result = Evaluation(request.task_of(), request.source, request.static, request.seeds, request.config,
                        request.backend, request.workdir, children).run()
    body = result.model_dump(mode="json")
    try:
        frame = frames.encode({"kind": "result", "nonce": request.nonce, "result": body})
    except frames.FrameError:  # never leave without a result: cut every text field and send that
        frame = frames.encode({"kind": "result", "nonce": request.nonce, "result": _cut_strings(body, 2000)})
    frames.write_frame(out_fd, frame)


def _cut_strings(value, limit: int):
    """The record with every string cut to `limit` characters (a result too large to frame)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + " [... cut: the result was too large]"
    if isinstance(value, dict):
        return {k: _cut_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v, limit) for v in value]
    return value


class _Spare:
    """An evaluator forked ahead of time, while the zygote is idle, waiting for its one request.
    Forked before the request exists, it holds nothing of it until the request arrives."""

    def __init__(self, channels: tuple[int, int]) -> None:
        req_r, self.req_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the evaluator
            os.setsid()
            for fd in (*channels, self.req_w, self.res_r):
                os.close(fd)
            code = 0
            try:
                from environment.evaluation.transport.children import ChildHandle
                from environment.evaluation.replay.replayer import replayer_main
                from environment.evaluation.transport.request import EvalRequest
                # candidate, reference, replayer, sampler (the GPU-shape replay beside the replayer's): all
                # forked before the request exists in this process
                children = (ChildHandle(role="candidate"), ChildHandle(role="reference"),
                            ChildHandle(replayer_main, role="replayer"), ChildHandle(replayer_main, role="sampler"))
                envelope, (body,) = frames.read_frame(req_r, None, time.monotonic() + 10**9)
                request = EvalRequest.model_validate_json(body.numpy().tobytes()).model_copy(
                    update={"nonce": envelope["nonce"], "workdir": envelope["workdir"]})
                _evaluate_in_child(request, res_w, children)
            except frames.ClosedIdle:  # a spare evaluator whose pool closed before any request came
                pass
            except BaseException:
                traceback.print_exc()
                code = 1
            os._exit(code)
        os.close(req_r)
        os.close(res_w)

    def evaluate(self, envelope: dict, body) -> dict:
        """Forward the request body unparsed: the zygote, whose memory every later child inherits,
        never holds a decoded request (source, seeds) of any session."""
        budget = float(envelope["budget_s"])
        try:
            frames.write_frame(self.req_w, frames.encode(envelope, [body]))
            body.zero_()
            header, _ = frames.read_frame(self.res_r, envelope["nonce"], time.monotonic() + budget)
            return {"kind": "result", "result": header["result"]}
        except frames.Deadline:
            return {"kind": "timeout", "error": f"the evaluation exceeded {budget:.0f} s and was killed"}
        except frames.FrameError as exc:
            return {"kind": "crash", "error": f"the evaluator failed ({exc}); see the server log"}
        finally:
            for fd in (self.req_w, self.res_r):
                os.close(fd)
            try:
                os.killpg(self.pid, signal.SIGKILL)  # sweep the whole evaluation: evaluator, children, strays
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            _reap_orphans()


def main() -> None:
    channel_in, channel_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints go to stderr, never into the channel
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    from environment.config import detect_backend

    backend = detect_backend()
    _warm_up(backend)
    frames.write_frame(channel_out, frames.encode({"kind": "ready", "backend": backend, "layers": probe_layers(),
                                                  "pid": os.getpid()}))
    spare = _Spare((channel_in, channel_out))
    while True:
        try:
            envelope, (body,) = frames.read_frame(channel_in, None, time.monotonic() + 10**9)
        except (frames.FrameError, ValueError):
            os.killpg(spare.pid, signal.SIGKILL)
            return  # the server went away
        envelope["workdir"] = workdir = tempfile.mkdtemp(prefix="kenv-")
        try:
            response = spare.evaluate(envelope, body)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        request_id = envelope["id"]
        del envelope, body
        spare = _Spare((channel_in, channel_out))  # fork the next one before answering: idle time hides it
        frames.write_frame(channel_out, frames.encode(dict(response, id=request_id)))


if __name__ == "__main__":
    main()
