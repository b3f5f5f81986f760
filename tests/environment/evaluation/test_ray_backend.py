"""The Ray evaluation backend on a real local multi-node Ray cluster (ray.cluster_utils.Cluster).

One cluster per module: a head that schedules nothing and two worker nodes with one CPU each, so the
two CPU actors sit on different nodes. Checked: /sandbox per node, spreading, results identical to
the local pool (bit-identical modeled speedups, verdicts, flags), a sample of the red-team suite,
fair order across sessions, routing by backend, episodes over WebSocket through two API servers sharing
the cluster (one through Ray Client, as a Space), and a node killed mid-evaluation.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from environment import reward
from environment.config import RayConfig
from environment.evaluation import harness
from environment.evaluation.transport.pool import EvaluatorPool
from environment.tasks import get_task

if os.environ.get("CI") and "ray" not in sys.modules:
    import ray  # noqa: F401  (CI installs the extra: a missing Ray fails here instead of skipping)
ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install '.[ray]')")

from environment.local_server import free_port  # noqa: E402
from tests.redteam import test_redteam as redteam  # noqa: E402
from tests.redteam.expected import EXPECTED  # noqa: E402
from tests.support.ray_cluster import add_worker_node, local_cluster  # noqa: E402

pytestmark = pytest.mark.slow
VOLATILE = ("wall_s", "compute_s", "stage_s", "notes")  # clocks and the environment's own notes


def comparable(result) -> dict:
    """Everything the harness decided: verdicts, flags, modeled speedups and costs, errors, logs."""
    return {k: v for k, v in result.model_dump(mode="json").items() if k not in VOLATILE}


@contextlib.contextmanager
def using(backend):
    saved = harness._pool
    harness._pool = backend
    try:
        yield backend
    finally:
        harness._pool = saved


@pytest.fixture(scope="module")
def cluster():
    saved = {k: os.environ.get(k) for k in redteam.CANARIES}
    os.environ.update(redteam.CANARIES)  # every node (and so every actor) starts with the canaries
    try:
        with local_cluster(nodes=2, client_port=free_port()) as c:
            c.client_address = f"ray://127.0.0.1:{c.head_node._ray_params.ray_client_server_port}"
            for key, value in saved.items():
                os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
            yield c
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)


@pytest.fixture(scope="module")
def ray_backend(cluster):
    from environment.evaluation.transport.ray_backend import RayBackend
    backend = RayBackend(RayConfig(address=cluster.address, cpu_actors=2, gpu_actors=0))
    backend.describe()  # both actors warm
    return backend


@pytest.fixture(scope="module")
def local_pool():
    pool = EvaluatorPool(1)
    yield pool
    pool.close()


def test_sandbox_reports_every_node_with_its_layers(ray_backend):
    info = ray_backend.describe()
    nodes = info["nodes"]
    assert len(nodes) == 2 and len({n["node_id"] for n in nodes}) == 2, nodes
    local = EvaluatorPool(1)
    try:
        local_layers = local.describe()["layers"]
    finally:
        local.close()
    for node in nodes:
        assert node["backend"] == "cpu" and node["kind"] == "cpu" and node["workers"] == 1
        assert node["layers"] == local_layers, node  # the same layers inside the actors as on this host
        assert node["layers"]["seccomp"] and node["layers"]["rlimits"]
    assert info["backend"] == "cpu" and info["workers"] == 2


SAMPLES = [("gelu_bias", "correct", 1), ("gelu_bias", "wrong", 0), ("rmsnorm", "correct", 1),
           ("causal_attention", "wrong", 1), ("softmax", "correct", 1), ("matmul_bias_relu", "wrong", 1),
           ("layernorm", "correct", 1), ("cross_entropy", "wrong", 1)]


def _evaluate_all(backend, jobs):
    with using(backend), ThreadPoolExecutor(4) as ex:
        return list(ex.map(lambda job: harness.evaluate(get_task(job[0]), job[1], seed=3, salt="same",
                                                        session=f"s{job[2]}"), jobs))


def test_results_spread_over_nodes_and_are_identical_to_the_local_pool(ray_backend, local_pool):
    jobs = []
    for i, (task_id, kind, which) in enumerate(SAMPLES):
        path = sorted(get_task(task_id).solutions[kind])[which]
        jobs.append((task_id, path.read_text(), i % 3))
    before = dict(ray_backend.served_by_node)
    remote = _evaluate_all(ray_backend, jobs)
    local = _evaluate_all(local_pool, jobs)
    served = {n: c - before.get(n, 0) for n, c in ray_backend.served_by_node.items()}
    assert len([n for n, c in served.items() if c > 0]) == 2 and sum(served.values()) == len(jobs), served
    assert any(r.correct for r in local) and not all(r.correct for r in local)
    assert any(r.performance and r.performance.speedup_kind == "modeled" for r in local)
    for job, r, l in zip(jobs, remote, local):
        assert r.outcome == l.outcome != "harness_error" and not r.notes, (job[0], r.harness_error)
        assert comparable(r) == comparable(l), job[0]
        assert reward.score(r) == reward.score(l)


REDTEAM_SAMPLE = sorted({names[i] for names in
                         [[n for n, e in sorted(EXPECTED.items()) if e.layer == layer]
                          for layer in {e.layer for e in EXPECTED.values()}] for i in (0, 1) if i < len(names)}
                        | {"a29_read_parent_environ.py", "a31_environment_secrets.py", "a35_connect_server_port.py",
                           "a42_seeds_from_stack.py"})
REDTEAM = sorted(EXPECTED) if os.environ.get("KERNEL_ENV_RAY_REDTEAM") == "all" else REDTEAM_SAMPLE


@pytest.mark.parametrize("name", REDTEAM)
def test_redteam_attack_meets_its_pinned_outcome_through_ray_as_locally(name, ray_backend, local_pool, monkeypatch):
    """Two attacks per sandbox layer plus the secret hunters (KERNEL_ENV_RAY_REDTEAM=all: every attack).
    The canaries were in every node's environment when it started."""
    seen = []
    evaluate = harness.evaluate

    def recording(*args, **kwargs):
        seen.append((args, kwargs, evaluate(*args, **kwargs)))
        return seen[-1][2]

    monkeypatch.setattr(harness, "evaluate", recording)
    with using(ray_backend):
        redteam.test_attack_meets_its_pinned_outcome(name)  # the suite's own contract, through Ray
    args, kwargs, remote = next(s for s in seen if s[1].get("salt") == name)
    with using(local_pool):
        local = evaluate(*args, **kwargs)
    assert verdict(remote, name) == verdict(local, name)


# Attacks whose result depends on where the allocator puts tensors: they differ between two local runs
# too (a10 passed 5, 4, 5, 5 of 5 trials in four local runs here), so only their flags are compared.
ADDRESS_DEPENDENT = {"a09_freed_memory.py", "a10_cache_by_pointer.py"}


def verdict(result, name: str) -> tuple:
    """What the red-team contract is about: outcome, flags and, where reproducible, verdict and score."""
    perf = result.performance
    pinned = (result.outcome, result.static.flags, result.flags)
    if name in ADDRESS_DEPENDENT:
        return pinned
    return pinned + (result.correct, reward.score(result), perf and perf.speedup, perf and perf.speedup_kind)


def test_ray_missing_is_a_harness_error_naming_the_extra(monkeypatch):
    from environment.evaluation.transport.ray_backend import RayBackend
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    task = get_task("gelu_bias")
    source = sorted(task.solutions["correct"])[0].read_text()
    with using(RayBackend(RayConfig(address="127.0.0.1:1"))):
        result = harness.evaluate(task, source, seed=0)
    assert result.outcome == "harness_error"
    assert "pip install '.[ray]'" in result.harness_error


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=300) as r:
        return json.loads(r.read())


def test_two_api_servers_share_the_cluster_and_play_episodes_over_websocket(cluster, ray_backend, monkeypatch):
    """Server A joins at the GCS address; server B, like a Space outside the cluster, through Ray Client."""
    from environment.client import KernelEnv
    from environment.models import KernelAction
    from environment.local_server import LocalServer

    monkeypatch.setenv("KERNEL_ENV_RAY_ADDRESS", cluster.address)
    monkeypatch.setenv("KERNEL_ENV_RAY_CPU_ACTORS", "2")
    monkeypatch.setenv("KERNEL_ENV_SECRET", "shared-by-every-replica")
    task = get_task("gelu_bias")
    right = next(p for p in task.solutions["correct"] if p.name.startswith("triton")).read_text()
    wrong = sorted(task.solutions["wrong"])[0].read_text()
    served_before = _served_by_actors(ray_backend)
    with contextlib.ExitStack() as servers:
        a = servers.enter_context(LocalServer(start_timeout_s=300))  # a driver at the GCS address
        monkeypatch.setenv("KERNEL_ENV_RAY_ADDRESS", cluster.client_address)  # the Space's way in: Ray Client
        b = servers.enter_context(LocalServer(start_timeout_s=300))
        sandboxes = [_get(s.url + "/sandbox") for s in (a, b)]
        actors = [sorted((n["actor"], n["node_id"]) for n in sb["nodes"]) for sb in sandboxes]
        assert actors[0] == actors[1] and len(actors[0]) == 2  # one set of actors, found by name
        assert sandboxes[1]["ray"]["address"].startswith("ray://")
        assert all(n["layers"]["seccomp"] and n["layers"]["rlimits"] for sb in sandboxes for n in sb["nodes"])
        observations = {}

        def episode(server):
            with KernelEnv(base_url=server.url, message_timeout_s=300).sync() as env:
                env.reset(task_id="gelu_bias", seed=5)
                first = env.step(KernelAction(code=wrong))
                second = env.step(KernelAction(code=right))
                observations[server.url] = (first, second, env.state())

        threads = [threading.Thread(target=episode, args=(s,)) for s in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert len(observations) == 2, (a.log_tail(), b.log_tail())
        for first, second, state in observations.values():
            assert first.observation.outcome == "ok" and not first.observation.correct
            assert second.observation.correct and second.reward > first.reward
            assert second.observation.speedup_kind == "modeled" and second.observation.evaluation.notes == []
            assert state.turn == 2 and state.step_count == 2
        assert _served_by_actors(ray_backend) == served_before + 4  # both servers' steps ran on the shared actors
        # A replica going away takes only its own episodes: the actors are detached, not owned by it.
        a.stop()
        with KernelEnv(base_url=b.url, message_timeout_s=300).sync() as env:
            env.reset(task_id="gelu_bias", seed=6)
            assert env.step(KernelAction(code=right)).observation.correct
        assert _served_by_actors(ray_backend) == served_before + 5


def _served_by_actors(backend) -> int:
    return sum(n["served"] for n in backend.describe()["nodes"])


def _request(task_id: str, backend: str):
    """What harness.evaluate sends (per-evaluation seeds, no secret), for calling a backend directly."""
    from environment.config import harness_config
    from environment.evaluation.evaluator.inputs import seed_plan
    from environment.evaluation.static.checks import check_source
    from environment.evaluation.transport.request import EvalRequest
    task = get_task(task_id)
    source = sorted(task.solutions["correct"])[0].read_text()
    return EvalRequest.of(task, source, seed_plan(b"k", 1, task.id, "", 5), harness_config(),
                          check_source(source, task.reference_code), backend)


def test_waiting_sessions_are_served_fairly_across_the_actors(ray_backend, monkeypatch):
    """Both actor slots held by a trainer; two more trainer requests and then a person's queue up:
    the person's goes out first."""
    queue = ray_backend._queues["cpu"]
    held = [queue.acquire("trainer", lambda: ray_backend._take("cpu", set())) for _ in range(2)]
    sent: list[str] = []
    call = ray_backend._call

    def recording(slot, request, session, timeout_s):
        with queue.lock:
            sent.append(session)
        return call(slot, request, session, timeout_s)

    monkeypatch.setattr(ray_backend, "_call", recording)
    threads = []
    for i, session in enumerate(["trainer", "trainer", "person"]):
        threads.append(threading.Thread(target=ray_backend.run, args=(_request("gelu_bias", "cpu"), session, 120)))
        threads[-1].start()
        with queue.lock:
            while len(queue.waiting) < i + 1:
                queue.lock.wait(1.0)
    ray_backend._release("cpu", held[0])  # one slot frees: the three go out one after another
    for t in threads:
        t.join(600)
    ray_backend._release("cpu", held[1])
    assert sent == ["person", "trainer", "trainer"], sent


def test_requests_are_routed_by_backend_to_cpu_or_gpu_actors(cluster, ray_backend):
    """A node that declares one GPU gets the num_gpus=1 actor; cuda requests go there, cpu ones never do.
    (This host has no CUDA: the cuda evaluation itself ends as the environment's failure, not the submission's.)"""
    from environment.evaluation.transport.ray_backend import RayBackend
    gpu_node = add_worker_node(cluster, cpus=1, gpus=1)
    mixed = RayBackend(RayConfig(address=cluster.address, cpu_actors=2, gpu_actors=1))
    try:
        nodes = {n["actor"]: n for n in mixed.describe()["nodes"]}
        assert nodes["kernel_env-cuda-0"]["node_id"] == gpu_node.node_id
        assert nodes["kernel_env-cuda-0"]["backend"] == "cuda" and nodes["kernel_env-cpu-0"]["backend"] == "cpu"
        assert gpu_node.node_id not in {nodes[f"kernel_env-cpu-{i}"]["node_id"] for i in (0, 1)}
        on_gpu = mixed.run(_request("gelu_bias", "cuda"), "s", 120)
        assert on_gpu.actor == "kernel_env-cuda-0" and on_gpu.node_id == gpu_node.node_id
        on_cpu = [mixed.run(_request("gelu_bias", "cpu"), "s", 120) for _ in range(3)]
        assert {r.actor for r in on_cpu} <= {"kernel_env-cpu-0", "kernel_env-cpu-1"}
        assert all(r.result.correctness.correct for r in on_cpu)
    finally:
        ray.kill(next(a.handle for a in mixed.actors() if a.kind == "cuda"), no_restart=True)
        cluster.remove_node(gpu_node)


# Correct and deliberately slow (the same result recomputed many times): still running when its node dies.
SLOW_CORRECT = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        out = torch.nn.functional.gelu(x + bias)
        for _ in range(3000):
            out = torch.nn.functional.gelu(x + bias)
        return out
"""


def test_a_node_killed_mid_evaluation_is_retried_once_elsewhere(cluster, ray_backend, local_pool):
    """Last in the module: it removes a node (and adds a fresh one for the lost actor)."""
    task = get_task("gelu_bias")
    served_before = sum(ray_backend.served_by_node.values())
    outcome = {}

    def submit():
        with using(ray_backend):
            outcome["result"] = harness.evaluate(task, SLOW_CORRECT, seed=9, salt="kill", session="k")

    worker = threading.Thread(target=submit)
    worker.start()
    busy = None
    deadline = time.monotonic() + 300
    while busy is None and time.monotonic() < deadline and worker.is_alive():
        for slot in ray_backend.actors():
            if ray.get(slot.handle.busy.remote(), timeout=60) > 0:
                busy = slot
                break
    assert busy is not None, "no actor ever ran the evaluation"
    node_id = ray.get(busy.handle.describe.remote(), timeout=60)["node_id"]
    node = next(n for n in cluster.worker_nodes if n.node_id == node_id)
    cluster.remove_node(node, allow_graceful=False)
    worker.join(600)
    result = outcome["result"]
    assert result.outcome == "ok" and result.correct, result.harness_error
    assert len(result.notes) == 1 and busy.name in result.notes[0] and "retried once" in result.notes[0]
    assert sum(ray_backend.served_by_node.values()) == served_before + 1  # one answer: not lost, not doubled
    with using(local_pool):
        local = harness.evaluate(task, SLOW_CORRECT, seed=9, salt="kill", session="k")
    assert comparable(result) == comparable(local)
    # the lost actor is restarted by Ray on a fresh node and serves again
    add_worker_node(cluster)
    deadline = time.monotonic() + 300
    while busy.down and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not busy.down

