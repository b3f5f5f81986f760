"""A real multi-node Ray cluster on this machine (ray.cluster_utils.Cluster), sized for a small host.

The head node schedules nothing (num_cpus=0); each worker node offers `cpus_per_node` CPUs, so
actors needing one CPU land on different nodes. Object stores stay small (evaluation requests and
results are a few KiB).

>>> with local_cluster(nodes=2) as cluster:
...     cluster.address  # what KERNEL_ENV_RAY_ADDRESS is set to
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator, Optional

STORE_BYTES = 80 * 2**20


def add_worker_node(cluster, cpus: float = 1, gpus: int = 0):
    return cluster.add_node(num_cpus=cpus, num_gpus=gpus, object_store_memory=STORE_BYTES)


@contextlib.contextmanager
def local_cluster(nodes: int = 2, cpus_per_node: float = 1, gpus_per_node: int = 0,
                  client_port: Optional[int] = None) -> Iterator:
    """`client_port`: also serve Ray Client there (KERNEL_ENV_RAY_ADDRESS=ray://127.0.0.1:PORT)."""
    import ray
    from ray.cluster_utils import Cluster

    # The head's Ray Client proxy gives each client's server process 30 s to come up; on a loaded 2-core host it
    # took longer (grpc.FutureTimeoutError in ray_client_server.err) and a server joining through Ray Client failed
    os.environ.setdefault("RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S", "180")
    head = {"num_cpus": 0, "object_store_memory": STORE_BYTES, "include_dashboard": False}
    if client_port:
        head["ray_client_server_port"] = client_port
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        for _ in range(nodes):
            add_worker_node(cluster, cpus_per_node, gpus_per_node)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        ray.shutdown()  # the driver first: the head node cannot be removed under a connected driver
        cluster.shutdown()
