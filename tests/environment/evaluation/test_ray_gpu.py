"""Measured CUDA evaluations on a num_gpus=1 Ray actor (needs a CUDA device and the Ray extra).

A one-node cluster that offers this host's GPU: the GPU actor's zygote measures with CUDA events,
and its verdicts equal the local pool's on the same device (timings differ run to run; verdicts,
flags and the speedup kind do not).
"""
from __future__ import annotations

import pytest

from environment.config import RayConfig
from environment.evaluation import harness
from environment.evaluation.transport.pool import EvaluatorPool
from environment.tasks import get_task

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install '.[ray]')")

from tests.support.ray_cluster import local_cluster  # noqa: E402
from tests.environment.evaluation.test_ray_backend import using  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


def test_a_gpu_actor_measures_cuda_evaluations_with_the_local_verdicts(monkeypatch):
    from environment.evaluation.transport.ray_backend import RayBackend
    monkeypatch.setenv("KERNEL_ENV_BACKEND", "cuda")
    task = get_task("gelu_bias")
    sources = [p.read_text() for p in sorted(task.solutions["correct"]) + sorted(task.solutions["wrong"])[:1]]
    local = EvaluatorPool(1)
    try:
        with using(local):
            expected = [harness.evaluate(task, s, seed=2, salt="gpu") for s in sources]
    finally:
        local.close()
    with local_cluster(nodes=1, cpus_per_node=2, gpus_per_node=1) as cluster:
        backend = RayBackend(RayConfig(address=cluster.address, cpu_actors=0, gpu_actors=1))
        node = backend.describe()["nodes"][0]
        assert node["kind"] == "cuda" and node["backend"] == "cuda" and node["layers"]["seccomp"]
        with using(backend):
            got = [harness.evaluate(task, s, seed=2, salt="gpu") for s in sources]
    for g, e in zip(got, expected):
        assert g.outcome == e.outcome == "ok" and g.correct == e.correct and g.flags == e.flags
        if g.correct:
            assert g.performance.speedup_kind == e.performance.speedup_kind == "measured_cuda"
