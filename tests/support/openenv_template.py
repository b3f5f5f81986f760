"""OpenEnv's own template environment (``openenv init``), generated offline and served on loopback.

Nobody here wrote it: the openenv CLI installed beside this Python generates it (an echo env whose
action is ``{"message": str}``), and it runs under uvicorn in a child process from its own folder.

>>> from tests.support.openenv_template import template_env  # a module-scoped fixture: the base URL
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx
import pytest

OPENENV_CLI = Path(sys.executable).parent / "openenv"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate(folder: Path, name: str = "tpl_env") -> Path:
    """``openenv init name`` in ``folder``; returns the environment's directory."""
    if not OPENENV_CLI.exists():
        pytest.skip(f"{OPENENV_CLI} is missing: pip install openenv")
    out = subprocess.run([str(OPENENV_CLI), "init", name, "--output-dir", str(folder)], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "UV_OFFLINE": "1"})
    env_dir = folder / name
    assert (env_dir / "server" / "app.py").exists(), f"openenv init failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return env_dir


@contextmanager
def served(env_dir: Path, start_timeout_s: float = 120.0) -> Iterator[str]:
    """The environment in ``env_dir`` under uvicorn on a free loopback port; yields its base URL."""
    port = _free_port()
    log = open(env_dir / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1",
                             "--port", str(port)], cwd=env_dir, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(env_dir)})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(f"the template env did not start:\n{(env_dir / 'server.log').read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def template_env(tmp_path_factory) -> Iterator[str]:
    """Base URL of OpenEnv's template environment, freshly generated and served on loopback."""
    with served(generate(tmp_path_factory.mktemp("openenv-template"))) as url:
        yield url
