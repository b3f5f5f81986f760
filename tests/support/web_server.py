"""The real server with the playground (ENABLE_WEB_INTERFACE=true) on a free loopback port, for UI tests.

Same launcher as ``tests/support/env_server.py`` (environment.local_server.LocalServer); only the environment of
the child differs.

>>> from tests.support.web_server import web_server  # a module-scoped fixture: the base URL
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pytest

from environment.local_server import LocalServer
from tests.support.env_server import started_server


@contextmanager
def playground_server(start_timeout_s: float = 240.0, **env: str) -> Iterator[LocalServer]:
    """A LocalServer started with ENABLE_WEB_INTERFACE=true (plus ``env``) in its environment."""
    with started_server(start_timeout_s, **{"ENABLE_WEB_INTERFACE": "true", **env}) as server:
        yield server


@pytest.fixture(scope="module")
def web_server():
    """Base URL (``http://127.0.0.1:PORT``) of a kernel_env server with the playground at /web."""
    with playground_server() as server:
        yield server.url
