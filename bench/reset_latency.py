"""Latency of `POST /reset` with body `{}` (the Space's first gate: 200 within 30 s, cold too) and of
a WebSocket reset, against a freshly started server: the first call and the median of the next 9.

    PYTHONPATH=. python bench/reset_latency.py
"""
from __future__ import annotations

import statistics
import time
import urllib.request

from environment import KernelEnv
from environment.local_server import LocalServer


def post_reset(url: str) -> float:
    start = time.perf_counter()
    req = urllib.request.Request(url + "/reset", data=b"{}", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
        r.read()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    with LocalServer(start_timeout_s=300) as server:
        http = [post_reset(server.url) for _ in range(10)]
        with KernelEnv(base_url=server.url).sync() as env:
            ws = []
            for i in range(10):
                start = time.perf_counter()
                env.reset(task_id="gelu_bias", seed=i)
                ws.append((time.perf_counter() - start) * 1e3)
    print("| call | first (ms) | median of next 9 (ms) |")
    print("|---|---|---|")
    print(f"| POST /reset {{}} | {http[0]:.1f} | {statistics.median(http[1:]):.1f} |")
    print(f"| WebSocket reset | {ws[0]:.1f} | {statistics.median(ws[1:]):.1f} |")


if __name__ == "__main__":
    main()
