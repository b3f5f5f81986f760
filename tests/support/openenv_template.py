"""OpenEnv environments nobody here wrote, served on loopback for the Any env tests.

- ``template_env``: OpenEnv's own template (``openenv init``, from the openenv CLI installed beside
  this Python; an echo env whose action is ``{"message": str}``), under uvicorn from its own folder.
- ``dipg_env``: ``openenv-dipg-safety`` from PyPI (a medical-safety QA env: observation ``context``
  and ``question``, action ``{"llm_response": str}``, rewards from -50 up), in the venv of its own
  that scripts/test.sh creates (``.venv-dipg``: its pins must not meet this project's), reading a
  small dataset written here instead of its default Hub dataset.
- ``mcp_env``: tests/support/mcp_counter_app.py, two MCP tools built with openenv's own MCPEnvironment
  under openenv-core 0.3.0 (``.venv-openenv-core``): the one env here that is ours, for the MCP forms.

>>> from tests.support.openenv_template import template_env  # a module-scoped fixture: the base URL
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import httpx
import pytest

OPENENV_CLI = Path(sys.executable).parent / "openenv"
ROOT = Path(__file__).resolve().parents[2]
DIPG_PYTHON = ROOT / ".venv-dipg" / "bin" / "python"


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
def served(env_dir: Path, app: str = "server.app:app", python: str = sys.executable, start_timeout_s: float = 120.0,
           log_path: Optional[Path] = None, **env: str) -> Iterator[str]:
    """``app`` under uvicorn from ``env_dir`` on a free loopback port; yields its base URL."""
    port = _free_port()
    log_path = log_path or env_dir / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([str(python), "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)],
                            cwd=env_dir, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(env_dir), **env})
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
                raise RuntimeError(f"{app} did not start:\n{log_path.read_text()[-3000:]}")
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


DIPG_CONTEXT = "Drug A was tested in 12 patients with DIPG. Two responded."
DIPG_QUESTION = "How many patients responded to drug A?"


@pytest.fixture(scope="module")
def dipg_env(tmp_path_factory) -> Iterator[str]:
    """Base URL of openenv-dipg-safety (PyPI) serving one question about a given context."""
    if not DIPG_PYTHON.exists():
        pytest.fail(f"{DIPG_PYTHON} is missing: scripts/test.sh creates it (pip install openenv-dipg-safety in a "
                    "venv of its own)")
    folder = tmp_path_factory.mktemp("dipg")
    row = {"messages": [
        {"role": "user", "content": f"<context>{DIPG_CONTEXT}</context>\n<question>{DIPG_QUESTION}</question>"},
        {"role": "assistant", "content": "Two patients responded."}]}
    (folder / "data.jsonl").write_text(json.dumps(row) + "\n")
    with served(folder, "med_safety_gym.app:app", str(DIPG_PYTHON), DIPG_DATASET_PATH=str(folder / "data.jsonl"),
                HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PYTHONPATH="") as url:
        yield url


OLD_CORE_PYTHON = ROOT / ".venv-openenv-core" / "bin" / "python"


@pytest.fixture(scope="module")
def mcp_env(tmp_path_factory) -> Iterator[str]:
    """Base URL of tests/support/mcp_counter_app.py (two MCP tools) under openenv-core 0.3.0."""
    if not OLD_CORE_PYTHON.exists():
        pytest.fail(f"{OLD_CORE_PYTHON} is missing: scripts/test.sh creates it (pip install openenv-core==0.3.0)")
    with served(Path(__file__).parent, "mcp_counter_app:app", str(OLD_CORE_PYTHON),
                log_path=tmp_path_factory.mktemp("mcp") / "server.log") as url:
        yield url
