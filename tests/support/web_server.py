"""The real server with the playground (ENABLE_WEB_INTERFACE=true) on a free loopback port, for UI tests.

Same launcher as ``tests/support/env_server.py`` (inference.LocalServer); only the environment of
the child differs.

>>> from tests.support.web_server import web_server  # a module-scoped fixture: the base URL
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

import pytest

from inference import LocalServer


@contextmanager
def playground_server(start_timeout_s: float = 240.0, **env: str) -> Iterator[LocalServer]:
    """A LocalServer started with ENABLE_WEB_INTERFACE=true (plus ``env``) in its environment."""
    extra = {"ENABLE_WEB_INTERFACE": "true", **env}
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
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


@pytest.fixture(scope="module")
def web_server():
    """Base URL (``http://127.0.0.1:PORT``) of a kernel_env server with the playground at /web."""
    with playground_server() as server:
        yield server.url
