"""The environment server an episode plays against: one already running, one started from a Docker image, or
one started here as a subprocess on a free loopback port (``LocalServer``, also what the tests and the training
example start). Used by inference.py; nothing here talks to a model."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from environment.client import KernelEnv

ROOT = Path(__file__).resolve().parents[1]   # where app.py is: the server is `python -m uvicorn app:app` there


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """The environment server as a subprocess on a free loopback port (its output goes to a log file)."""

    def __init__(self, start_timeout_s: float = 180.0, root: Path = ROOT):
        self.start_timeout_s = start_timeout_s
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = Path(tempfile.mkstemp(prefix="kernel_env_server_", suffix=".log")[1])

    def start(self) -> "LocalServer":
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)  # its own process group, so stop() also ends its workers
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the environment server exited with code {self.proc.returncode}: "
                                   f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the environment server did not answer /health within {self.start_timeout_s:.0f} s: "
                           f"{self.log_tail()}")

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            self.log_path.unlink()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class EnvSource:
    """Where episodes are played: a running server, a Docker image, or a server started here (lazily).

    image: start the environment from this Docker image; env_url: a server already running there; with
    neither, a LocalServer on a free loopback port. step_timeout_s bounds one step on each connection;
    say reports progress (inference.py sends it to stderr)."""

    def __init__(self, image: Optional[str] = None, env_url: Optional[str] = None, start_timeout_s: float = 180.0,
                 step_timeout_s: float = 180.0, say: Callable[[str], None] = lambda message: None):
        self.image, self.env_url, self.say = image, env_url, say
        self.start_timeout_s, self.step_timeout_s = start_timeout_s, step_timeout_s
        self.server: Optional[LocalServer] = None
        self.container: Any = None  # openenv's LocalDockerProvider, when running from an image
        self.url: Optional[str] = None
        self.failure: Optional[str] = None

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """A connected KernelEnv client for one episode."""
        if self.failure:
            raise RuntimeError(self.failure)
        try:
            self.url = self.url or self._prepare()
        except Exception as e:  # remembered: the remaining tasks fail fast with the same cause
            self.failure = f"environment unavailable: {' '.join(str(e).split())[:500]}"
            raise RuntimeError(self.failure) from None
        with KernelEnv(base_url=self.url, message_timeout_s=self.step_timeout_s).sync() as env:
            yield env

    def _prepare(self) -> str:
        if self.image:
            # What KernelEnv.from_docker_image does, with our readiness wait (its default of 30 s is
            # short for a cold start on 2 vCPU) and our step timeout on each connection.
            from openenv.core.containers.runtime import LocalDockerProvider

            self.say(f"starting the environment from Docker image {self.image}")
            self.container = LocalDockerProvider()
            url = self.container.start_container(self.image, env_vars={"PORT": "8000"})
            self.container.wait_for_ready(url, timeout_s=self.start_timeout_s)
            return url
        if self.env_url:
            return self.env_url
        self.say("starting the environment server locally")
        self.server = LocalServer(self.start_timeout_s)
        self.server.start()
        self.say(f"environment server ready at {self.server.url}")
        return self.server.url

    def close(self) -> None:
        if self.container is not None:
            with contextlib.suppress(Exception):
                self.container.stop_container()
        if self.server is not None:
            self.server.stop()
