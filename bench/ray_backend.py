"""The Ray evaluation backend against the local pool, side by side in one run: throughput and p50/p95
latency of the same evaluations through the local warm pool and through 1, 2 and 4 Ray actors on a
local multi-node cluster, and the per-evaluation overhead Ray adds (target: under 20 ms).

    PYTHONPATH=. python bench/ray_backend.py [--evals 24] [--rounds 3] [--clients 8] [--nodes 2]

Needs the Ray extra (pip install '.[ray]'). Every evaluation goes through harness.evaluate, exactly
as a step does. Overhead: the time of each Ray call minus the time the actor spent in its pool (one
client at a time, so no queueing is counted), and the sequential p50 latency of Ray with one actor
minus the local pool's. On a host with few cores, more actors than cores cannot add throughput.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from environment.config import RayConfig, ServerConfig  # noqa: E402
from environment.evaluation import harness  # noqa: E402
from environment.evaluation.transport.pool import EvaluatorPool  # noqa: E402
from environment.evaluation.transport.ray_backend import RayBackend  # noqa: E402
from environment.tasks import get_task  # noqa: E402
from tests.support.ray_cluster import local_cluster  # noqa: E402


class TimedRayBackend(RayBackend):
    """RayBackend that records, per call, the round trip and the time inside the actor's pool."""

    def __init__(self, config: RayConfig) -> None:
        super().__init__(config)
        self.calls: list[tuple[float, float]] = []

    def _call(self, slot, request, session, timeout_s):
        start = time.perf_counter()
        response = super()._call(slot, request, session, timeout_s)
        self.calls.append((time.perf_counter() - start, response["actor_s"]))
        return response


def workload(n: int) -> list[tuple]:
    """Alternating correct PyTorch and Triton gelu_bias solutions (cheap, so overheads show)."""
    task = get_task("gelu_bias")
    sources = [next(p for p in task.solutions["correct"] if p.name.startswith(k)).read_text()
               for k in ("torch", "triton")]
    return [(task, sources[i % 2], i) for i in range(n)]


def run(backend, jobs: list[tuple], clients: int) -> tuple[float, list[float]]:
    def one(job):
        task, source, i = job
        start = time.perf_counter()
        result = harness.evaluate(task, source, seed=i, salt="bench", session=f"client{i % clients}")
        assert result.outcome == "ok" and result.correct, result.harness_error or result.correctness
        return time.perf_counter() - start

    harness._pool = backend
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as ex:
        latencies = list(ex.map(one, jobs))
    return time.perf_counter() - start, latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=24, help="evaluations per configuration and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each runs every configuration in turn")
    parser.add_argument("--clients", type=int, default=8, help="concurrent callers (sessions)")
    parser.add_argument("--nodes", type=int, default=2, help="worker nodes of the local cluster (2 CPUs each)")
    parser.add_argument("--sequential", type=int, default=12, help="one-at-a-time evaluations for the overhead")
    args = parser.parse_args()
    jobs = workload(args.evals)
    local = EvaluatorPool(ServerConfig().workers)
    local.describe()
    with local_cluster(nodes=args.nodes, cpus_per_node=2) as cluster:
        backends = {f"local pool ({local.workers} workers)": local}
        for actors in (1, 2, 4):
            backend = TimedRayBackend(RayConfig(address=cluster.address, cpu_actors=actors, gpu_actors=0))
            backend.describe()
            backends[f"Ray, {actors} actor{'s' * (actors > 1)}"] = backend
        for backend in backends.values():
            run(backend, workload(8), 8)  # warm every worker
        nodes = len({n["node_id"] for n in backend.describe()["nodes"]})
        one = next(b for b in backends.values() if isinstance(b, RayBackend) and b.config.cpu_actors == 1)
        one.calls.clear()
        sequential: dict[str, list[float]] = {"local": [], "ray": []}
        for i in range(args.sequential):  # alternating, so both see the same background load
            sequential["local"] += run(local, [jobs[i % len(jobs)]], 1)[1]
            sequential["ray"] += run(one, [jobs[i % len(jobs)]], 1)[1]
        overhead = [total - inside for total, inside in one.calls]
        walls = {name: 0.0 for name in backends}
        latencies: dict[str, list[float]] = {name: [] for name in backends}
        for _ in range(args.rounds):  # interleaved rounds: background load spreads over every row alike
            for name, backend in backends.items():
                wall, lat = run(backend, jobs, args.clients)
                walls[name] += wall
                latencies[name] += lat
    local.close()
    total = len(jobs) * args.rounds
    base = total / walls[next(iter(walls))]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; Ray cluster: {args.nodes} worker nodes "
          f"(4 actors on {nodes} nodes); {total} evaluations of gelu_bias (PyTorch and Triton, Triton "
          f"interpreter) per row in {args.rounds} interleaved rounds, {args.clients} concurrent sessions\n")
    print("| backend | wall s | evaluations/s | vs local | p50 latency ms | p95 latency ms |")
    print("|---|---|---|---|---|---|")
    for name in backends:
        rate = total / walls[name]
        print(f"| {name} | {walls[name]:.2f} | {rate:.2f} | {rate / base:.2f}x | {pct(latencies[name], .5) * 1e3:.0f} | "
              f"{pct(latencies[name], .95) * 1e3:.0f} |")
    added = statistics.median(sequential["ray"]) - statistics.median(sequential["local"])
    print(f"\nRay overhead per evaluation, one at a time ({args.sequential} evaluations each, alternating):")
    print(f"- Ray call minus time inside the actor: p50 {pct(overhead, .5) * 1e3:.1f} ms, "
          f"p95 {pct(overhead, .95) * 1e3:.1f} ms (target < 20 ms)")
    print(f"- p50 latency: local pool {statistics.median(sequential['local']) * 1e3:.0f} ms, Ray 1 actor "
          f"{statistics.median(sequential['ray']) * 1e3:.0f} ms (difference {added * 1e3:+.1f} ms)")


if __name__ == "__main__":
    main()
