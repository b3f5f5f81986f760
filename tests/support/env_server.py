"""The real environment server as a subprocess on a free loopback port, for tests.

Uses the same launcher as inference.py (``python -m uvicorn app:app``); the server's own output
is kept in a log file whose tail is shown when it fails to start.

>>> from tests.support.env_server import env_server  # a module-scoped pytest fixture: the base URL
"""
from __future__ import annotations

import pytest

from inference import LocalServer


@pytest.fixture(scope="module")
def env_server():
    """Base URL (``http://127.0.0.1:PORT``) of a kernel_env server shared by the module's tests."""
    with LocalServer(start_timeout_s=180) as server:
        yield server.url
