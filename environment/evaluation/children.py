"""Forking and talking to one sandboxed child (candidate or reference) from the trusted evaluator."""
from __future__ import annotations

import fcntl
import os
import secrets
import signal
import time
from typing import Any, Optional

import torch

from environment.evaluation import frames
from environment.evaluation.child import CHILD_FAILED, child_main


class ChildDied(Exception):
    def __init__(self, reason: str, sandbox_kill: bool = False, timeout: bool = False):
        super().__init__(reason)
        self.reason, self.sandbox_kill, self.timeout = reason, sandbox_kill, timeout


def describe_status(status: int, timed_out: bool) -> tuple[str, bool]:
    """(human-readable exit reason, killed by seccomp)."""
    if timed_out:
        return "it ran past the time limit and was killed (an infinite loop, a sleep, or far too much work)", False
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGSYS:
            return ("it was killed by the sandbox for a forbidden system call (process creation, signals to other "
                    "processes, sockets, ptrace or namespaces)"), True
        if sig == signal.SIGXCPU:
            return "it exceeded its CPU-time limit", False
        if sig == signal.SIGSEGV:
            return "it crashed with a segmentation fault (out-of-bounds access or a stack overflow)", False
        if sig == signal.SIGXFSZ:
            return "it wrote more output than the file-size limit allows", False
        return f"it was killed by signal {signal.Signals(sig).name}", False
    if os.WIFEXITED(status):
        return (f"it exited with code {os.WEXITSTATUS(status)} before answering (sys.exit, os._exit, or a crash "
                "during import)"), False
    return "it stopped unexpectedly", False


_FIELD_TYPES = {"ok": bool, "plain": bool, "mutated": bool, "outputs": int, "launches": dict, "audit": list,
                "compute_s": (int, float), "elapsed_s": (int, float), "report": dict, "error": str, "sets": int,
                "digests": list, "races": list, "swallowed": list}


def check_reply(reply: dict[str, Any]) -> None:
    """Every field the evaluator reads must have its type: a forged frame is a protocol violation,
    not a crash of the trusted side."""
    for key, kind in _FIELD_TYPES.items():
        if key in reply and reply[key] is not None and not isinstance(reply[key], kind):
            raise frames.FrameError(f"reply field {key!r} has type {type(reply[key]).__name__}")
    launches = reply.get("launches") or {}
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in launches.items()):
        raise frames.FrameError("launch counts must map kernel names to integers")
    for key in ("audit", "races", "swallowed"):
        if not all(isinstance(e, str) for e in reply.get(key) or ()):
            raise frames.FrameError(f"{key} entries must be strings")


class ChildHandle:
    """A child forked before the evaluator has read its request: it inherits no seed, no reference
    module and no other session's data, and gets its job (source, constructor arguments) as a frame."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(16)
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(cmd_w)
            os.close(res_r)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            child_main(self.nonce, cmd_r, res_w)
        os.close(cmd_r)
        os.close(res_w)
        fcntl.fcntl(cmd_w, fcntl.F_SETFL, fcntl.fcntl(cmd_w, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.pid, self.cmd_fd, self.res_fd = pid, cmd_w, res_r
        self.tmpdir = ""
        self.status: Optional[int] = None
        self.timed_out = False
        self.channel_closed = False

    def start(self, job: dict[str, Any], timeout_s: float) -> None:
        """Send the job; constructor arguments that are tensors travel as tensors."""
        self.tmpdir = job["tmpdir"]
        tensors = [a for a in job["init_args"] if isinstance(a, torch.Tensor)]
        k = iter(range(len(tensors)))
        args = [{"__tensor__": next(k)} if isinstance(a, torch.Tensor) else a for a in job["init_args"]]
        header = dict(job, init_args=args, cmd="job", nonce=self.nonce)
        try:
            frames.write_frame(self.cmd_fd, frames.encode(header, tensors), time.monotonic() + timeout_s)
        except frames.FrameError:
            self.kill()
            raise self._died()

    def receive(self, timeout_s: float) -> tuple[dict[str, Any], list[torch.Tensor]]:
        try:
            return frames.read_frame(self.res_fd, self.nonce, time.monotonic() + timeout_s)
        except frames.Deadline:
            self.timed_out = True
            self.kill()
            raise self._died()
        except frames.ChannelClosed:
            self.channel_closed = True
            self.kill()
            raise self._died()

    def request(self, header: dict[str, Any], tensors: list[torch.Tensor] = (), timeout_s: float = 30.0):
        reply, out = self._request(header, tensors, timeout_s)
        check_reply(reply)
        return reply, out

    def _request(self, header: dict[str, Any], tensors: list[torch.Tensor], timeout_s: float):
        deadline = time.monotonic() + timeout_s
        try:
            frames.write_frame(self.cmd_fd, frames.encode(dict(header, nonce=self.nonce), list(tensors)), deadline)
        except frames.Deadline:
            self.timed_out = True
            self.kill()
            raise self._died()
        except frames.ChannelClosed:
            self.kill()
            raise self._died()
        return self.receive(max(0.0, deadline - time.monotonic()))

    def _died(self) -> ChildDied:
        status = self.wait()
        reason, sandbox_kill = describe_status(status, self.timed_out)
        ours = (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL) or \
            (os.WIFEXITED(status) and os.WEXITSTATUS(status) == CHILD_FAILED)
        if self.channel_closed and ours:
            # our kill, or the child loop failing on its closed channel: say what the submission did
            reason = "it closed its result channel before answering (its file descriptors were closed)"
        return ChildDied(reason, sandbox_kill=sandbox_kill, timeout=self.timed_out)

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> int:
        if self.status is None:
            _, self.status = os.waitpid(self.pid, 0)
        return self.status
