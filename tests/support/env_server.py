"""The real environment server as a subprocess on a free loopback port, for tests.

The launcher inference.py uses (environment.local_server.LocalServer, ``python -m uvicorn app:app``); its output
is kept in a log file whose tail is shown when it fails to start.

``env_server`` (the base URL) is one server the whole test session shares (tests/conftest.py makes it
available everywhere: take it as an argument, do not import it, or a module gets a server of its own);
a test that needs other settings starts its own:

>>> with started_server(KERNEL_ENV_MONITOR="1") as server: ...  # extra variables for the child
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:  # imported where a server starts: a CUDA host running only the GPU tests has no openenv
    from environment.local_server import LocalServer


@contextmanager
def started_server(start_timeout_s: float = 180.0, **env: str) -> Iterator[LocalServer]:
    """A LocalServer whose child sees ``env`` in its environment (this process's is left as it was)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        from environment.local_server import LocalServer
        server = LocalServer(start_timeout_s=start_timeout_s).start()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def shared_env_server():
    """Base URL (``http://127.0.0.1:PORT``) of the kernel_env server the session's tests share, its monitor
    on (``GET /monitor``: tests read what the environment saw). Each test plays in sessions of its own."""
    with started_server(KERNEL_ENV_MONITOR="1") as server:
        yield server.url


@pytest.fixture(scope="session")
def env_server(shared_env_server):
    """The shared server (a module may override this name; the others below still reach the shared one)."""
    return shared_env_server


@pytest.fixture(scope="session")
def monitored_env_server(shared_env_server):
    """The shared server, named for the tests that read its monitor."""
    return shared_env_server
