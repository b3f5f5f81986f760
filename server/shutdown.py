"""A prompt, clean stop on SIGTERM (what a Space restart sends) or Ctrl+C.

uvicorn stops on SIGTERM only once every open connection has closed; a page following a model's
auto-play keeps one open, and a step being evaluated keeps the environment's WebSocket busy, so the
server went on running (and auto-play went on submitting to a server that was going away). Here the
signal first runs the hooks registered with ``on_stop`` (the playground ends its model jobs as
*interrupted*: nothing half-done is recorded), then uvicorn's own handler; and uvicorn waits at most
``GRACE_S`` for the connections left before it cancels them and runs the lifespan shutdown.
SQLite commits each store write in one transaction, so whatever is cut off, the store stays consistent.
"""
from __future__ import annotations

import logging
import signal
import threading
from typing import Any, Callable

GRACE_S = 5.0
_hooks: list[Callable[[], None]] = []
log = logging.getLogger("kernel_env")


def on_stop(hook: Callable[[], None]) -> None:
    """Run ``hook`` (in a thread, once) when the server is told to stop."""
    _hooks.append(hook)


def _run_hooks() -> None:
    for hook in _hooks:
        try:
            hook()
        except Exception:  # one hook's failure must not keep the others (or the stop) from running
            log.exception("shutdown hook %r failed", hook)


def install(app: Any) -> None:
    """Chain the hooks in front of the signal handlers uvicorn installed (at startup, in the main thread)."""

    @app.on_event("startup")
    def _chain_signals() -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # a test client or an embedding server: it handles its own signals
        fired = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)
            config = getattr(getattr(previous, "__self__", None), "config", None)  # uvicorn's Server.handle_exit
            if config is not None and getattr(config, "timeout_graceful_shutdown", 0) is None:
                config.timeout_graceful_shutdown = GRACE_S

            def handler(signum: int, frame: Any, previous: Any = previous) -> None:
                if not fired.is_set():
                    fired.set()
                    # Not in the handler itself: a hook may take a lock the interrupted code holds.
                    threading.Thread(target=_run_hooks, name="kp-shutdown", daemon=True).start()
                if callable(previous):
                    previous(signum, frame)
                elif previous == signal.SIG_DFL:
                    signal.signal(signum, signal.SIG_DFL)
                    signal.raise_signal(signum)

            signal.signal(sig, handler)
