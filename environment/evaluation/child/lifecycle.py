"""A forked child's life around its work: its output to a log, only its two channels open, its temp dir,
the sandbox layers entered, replies written, and an exit without the parent's shutdown. Shared by the
candidate's and reference's children (serve.py) and the replayer (replay/replayer.py)."""
from __future__ import annotations

import os
import sys
import tempfile
import traceback
from typing import Any, NoReturn

import torch

from environment.evaluation.transport import frames, sandbox
from environment.evaluation.transport.protocol import Job, ReplayJob, Reply


def _close_other_fds(keep: set[int]) -> None:
    for fd in map(int, os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else range(3, 256):
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


CHILD_FAILED = 70  # exit status of a child whose own loop failed (e.g. its channel was closed under it)


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
