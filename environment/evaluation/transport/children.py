"""Forking and talking to one sandboxed child (candidate or reference) from the trusted evaluator."""
from __future__ import annotations

import fcntl
import os
import secrets
import signal
import time
from typing import Optional

import torch
from pydantic import BaseModel

from environment.evaluation.transport import frames
from environment.evaluation.child.lifecycle import CHILD_FAILED
from environment.evaluation.child.serve import child_main
from environment.evaluation.faults import HarnessFault
from environment.evaluation.transport.protocol import Job, Reply, parse


class ChildDied(Exception):
    def __init__(self, reason: str, sandbox_kill: bool = False, timeout: bool = False, role: str = "candidate"):
        super().__init__(reason)
        self.reason, self.sandbox_kill, self.timeout, self.role = reason, sandbox_kill, timeout, role


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


class ChildHandle:
    """A child forked before the evaluator has read its request: it inherits no seed, no reference
    module and no other session's data, and gets its job (source, constructor arguments) as a frame."""

    def __init__(self, target=child_main, role: str = "candidate") -> None:
        """target(nonce, cmd_fd, res_fd) runs in the child and never returns (child_main, replayer_main);
        role (candidate, reference, replayer) says whose failure a death of this child is."""
        self.nonce, self.role = secrets.token_hex(16), role
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(cmd_w)
            os.close(res_r)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            target(self.nonce, cmd_r, res_w)
        os.close(cmd_r)
        os.close(res_w)
        fcntl.fcntl(cmd_w, fcntl.F_SETFL, fcntl.fcntl(cmd_w, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.pid, self.cmd_fd, self.res_fd = pid, cmd_w, res_r
        self.tmpdir = ""
        self.status: Optional[int] = None
        self.timed_out = False
        self.channel_closed = False

    def start(self, job: Job, tensors: list[torch.Tensor], timeout_s: float) -> None:
        """Send the job (constructor arguments that are tensors travel beside it, as tensors)."""
        self.tmpdir = job.tmpdir
        self.send(job, tensors, timeout_s)

    def header(self, message: BaseModel) -> dict:
        """The frame header a command carries (its record and this run's nonce)."""
        return dict(message.model_dump(mode="json"), nonce=self.nonce)

    def send(self, message: BaseModel, tensors: list[torch.Tensor], timeout_s: float) -> None:
        """One command frame: the record as its JSON header, the tensors as raw bytes."""
        try:
            frame = frames.encode(self.header(message), list(tensors))
        except frames.FrameError as exc:  # what the evaluator built does not fit a frame: its own limit
            raise HarnessFault(f"the evaluator's message to the {self.role} child breaks the frame limit: {exc}") \
                from None
        try:
            frames.write_frame(self.cmd_fd, frame, time.monotonic() + timeout_s)
        except frames.Deadline:
            self.timed_out = True
            self.kill()
            raise self._died()
        except frames.ChannelClosed:
            self.kill()
            raise self._died()

    def receive(self, reply: type[Reply], timeout_s: float) -> tuple[Reply, list[torch.Tensor]]:
        """The next reply, validated as `reply` (a refused command reads as protocol.Unknown); a
        reply that does not validate is a protocol violation (frames.FrameError)."""
        try:
            header, tensors = frames.read_frame(self.res_fd, self.nonce, time.monotonic() + timeout_s)
        except frames.Deadline:
            self.timed_out = True
            self.kill()
            raise self._died()
        except frames.ChannelClosed:
            self.channel_closed = True
            self.kill()
            raise self._died()
        try:
            return parse(reply, header), tensors
        except ValueError as exc:
            raise frames.FrameError(str(exc)) from None

    def request(self, command: BaseModel, reply: type[Reply], tensors: list[torch.Tensor] = (),
                timeout_s: float = 30.0) -> tuple[Reply, list[torch.Tensor]]:
        deadline = time.monotonic() + timeout_s
        self.send(command, tensors, timeout_s)
        return self.receive(reply, max(0.0, deadline - time.monotonic()))

    def _died(self) -> ChildDied:
        status = self.wait()
        reason, sandbox_kill = describe_status(status, self.timed_out)
        ours = (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL) or \
            (os.WIFEXITED(status) and os.WEXITSTATUS(status) == CHILD_FAILED)
        if self.channel_closed and ours:
            # our kill, or the child loop failing on its closed channel: say what the submission did
            reason = "it closed its result channel before answering (its file descriptors were closed)"
        return ChildDied(reason, sandbox_kill=sandbox_kill, timeout=self.timed_out, role=self.role)

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
