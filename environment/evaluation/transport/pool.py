"""The local evaluation backend (the default): a few warm zygote processes and a fair queue
(fair.py) in front of them. With 2 cores, 1-2 evaluations run at once. The Ray backend
(ray_backend.py) runs one of these pools inside every actor.
"""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import torch

from environment.config import SECRET_ENV_PREFIXES, detect_backend, setting
from environment.evaluation.transport import frames
from environment.evaluation.transport.fair import FairQueue
from environment.evaluation.transport.request import EvalReply, EvalRequest, reply_of

ROOT = Path(__file__).resolve().parents[3]
_START = "start a zygote"  # what _take grants when a new zygote may be started


def child_environment() -> dict[str, str]:
    """The evaluators' environment: no tokens (a same-uid child can read /proc/<pid>/environ)."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(SECRET_ENV_PREFIXES)}
    # torch writes inductor's cache folder into this process's environment the first time anything here asks
    # for it: passed on, the evaluators' state (a candidate reaching dynamo was killed by seccomp, or not)
    # would depend on what this process had imported before its first zygote started
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    env["TRITON_INTERPRET"] = "1" if detect_backend() == "cpu" else "0"
    if detect_backend() == "cuda" and "TRITON_LIBCUDA_PATH" not in env:
        from environment.evaluation.transport.sandbox import libcuda_dir
        found = libcuda_dir()
        if found:
            env["TRITON_LIBCUDA_PATH"] = found
    env["OMP_NUM_THREADS"] = "1"
    if setting("KERNEL_ENV_HUGE_PAGES") != "0":
        env["GLIBC_TUNABLES"] = huge_page_tunables(env.get("GLIBC_TUNABLES", ""))
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def huge_page_tunables(tunables: str) -> str:
    """glibc's tunables with malloc's transparent huge pages on (glibc >= 2.35; older ones ignore it).
    The evaluators allocate tensors of up to 256 MiB (GPU-shape inputs, their outputs, the NaN poison, the
    clones of what the replay checked), and a fresh allocation costs a page fault per 4 KiB page it
    touches: with madvise'd huge pages a 128 MiB fill takes a fifth of the time (bench/harness.py
    --sections evaltime shows it side by side). Only where the host's THP mode is `madvise` or `always`;
    KERNEL_ENV_HUGE_PAGES=0 turns it off. A tunable already set by the operator wins."""
    if "glibc.malloc.hugetlb" in tunables:
        return tunables
    return ":".join(filter(None, [tunables, "glibc.malloc.hugetlb=1"]))


class Zygote:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "environment.evaluation.transport.zygote"], cwd=str(ROOT),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_environment(),
                                     start_new_session=True)
        header, _ = frames.read_frame(self.proc.stdout.fileno(), None, time.monotonic() + 180)
        self.backend: str = header["backend"]
        self.layers: dict[str, Any] = header["layers"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, request: EvalRequest, timeout_s: float) -> EvalReply:
        """The request body travels as opaque bytes the zygote forwards without decoding."""
        body = torch.frombuffer(bytearray(request.model_dump_json().encode()), dtype=torch.uint8)
        envelope = {"kind": "request", "id": request.id, "nonce": request.nonce,
                    "budget_s": float(request.config.total_timeout_s)}
        frames.write_frame(self.proc.stdin.fileno(), frames.encode(envelope, [body]))
        header, _ = frames.read_frame(self.proc.stdout.fileno(), None, time.monotonic() + timeout_s)
        return reply_of(header)

    def close(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()


class EvaluatorPool:
    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._queue = FairQueue()
        self._lock = self._queue.lock
        self._waiting = self._queue.waiting
        self._idle: list[Zygote] = []
        self._started = 0
        self.info: Optional[dict[str, Any]] = None

    def _zygote(self) -> Zygote:
        z = Zygote()
        self.info = {"backend": z.backend, "layers": z.layers}
        return z

    def describe(self) -> dict[str, Any]:
        if self.info is None:
            z = self._zygote()
            with self._lock:
                self._idle.append(z)
                self._started += 1
        return dict(self.info, workers=self.workers)

    def _take(self) -> Optional[Zygote | str]:
        """Under the queue's lock: an idle live zygote, _START when one may be started, else None."""
        while self._idle:
            z = self._idle.pop()
            if z.alive():
                return z
            z.close()  # died while idle (killed, OOM): replace it
            self._started -= 1
        if self._started < self.workers:
            self._started += 1
            return _START
        return None

    def _acquire(self, session: str) -> Zygote:
        got = self._queue.acquire(session, self._take)
        if got is not _START:
            return got
        try:
            return self._zygote()
        except BaseException:
            with self._lock:
                self._started -= 1
                self._lock.notify_all()
            raise

    def _release(self, z: Optional[Zygote]) -> None:
        with self._lock:
            if z is not None and z.alive():
                self._idle.append(z)
            else:
                self._started -= 1
            self._lock.notify_all()

    def run(self, request: EvalRequest, session: str, timeout_s: float) -> EvalReply:
        z = self._acquire(session)
        try:
            response = z.call(request.model_copy(update={"id": secrets.token_hex(8), "nonce": secrets.token_hex(16)}),
                              timeout_s + 30)
        except frames.FrameError as exc:
            z.close()
            self._release(None)
            return EvalReply(kind="crash", error=f"the evaluation worker failed ({exc})")
        self._release(z)
        return response

    def close(self) -> None:
        with self._lock:
            for z in self._idle:
                z.close()
            self._idle.clear()
