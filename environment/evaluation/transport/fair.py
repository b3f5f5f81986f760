"""The fair queue in front of every evaluation backend: waiting requests are granted a worker
session by session (the session served least so far goes next, ties in arrival order), so one busy
trainer cannot starve a person clicking Submit. The local pool and the Ray backend share it.
"""
from __future__ import annotations

import itertools
import threading
from typing import Callable, Optional, TypeVar

T = TypeVar("T")


class FairQueue:
    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.served: dict[str, int] = {}
        self.waiting: list[tuple[int, str]] = []
        self._tickets = itertools.count()

    def acquire(self, session: str, take: Callable[[], Optional[T]]) -> T:
        """Wait for this request's turn, then for `take()` (called under the lock) to return a worker."""
        entry = (next(self._tickets), session)
        with self.lock:
            self.waiting.append(entry)
            try:
                while True:
                    first = min(self.waiting, key=lambda w: (self.served.get(w[1], 0), w[0]))
                    if first == entry:
                        got = take()
                        if got is not None:
                            self.served[session] = self.served.get(session, 0) + 1
                            return got
                    self.lock.wait()
            finally:
                self.waiting.remove(entry)
                self.lock.notify_all()

    def notify(self) -> None:
        """A worker became free (or a waiting request may have become servable): wake the queue."""
        with self.lock:
            self.lock.notify_all()
