"""The Ray evaluation backend: evaluations on a Ray cluster, same API (`pip install .[ray]`).

Every actor hosts the local warm zygote pool (pool.py) on its node: CPU actors serve modeled
evaluations, `num_gpus=1` actors measured CUDA ones. The API server keeps one fair queue per backend
(fair.py) in front of the actors' slots, so sessions stay fair across the cluster; inside an actor
the pool's own queue is fair across API servers. Requests carry per-evaluation seeds, never the
trial secret. Actors are named and detached, so several API servers share them.

A lost actor or node (any Ray error on the call) gets exactly one retry on another actor, and the
result says so in `notes`; a second loss is a harness error, never the submission's score. The
step itself happens once, in the API server, whatever the retries.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

from environment.config import SECRET_ENV_PREFIXES, RayConfig
from environment.evaluation.transport.fair import FairQueue
from environment.evaluation.transport.request import EvalReply, EvalRequest, reply_of

log = logging.getLogger("kernel_env.ray")
INSTALL_HINT = "pip install '.[ray]' on the API server and every node, or unset KERNEL_ENV_RAY_ADDRESS"


class EvaluationActor:
    """One per Ray worker slot: a warm zygote pool of `workers` evaluators on this node."""

    def __init__(self, name: str, kind: str, workers: int) -> None:
        import ray

        from environment.evaluation.transport.pool import EvaluatorPool

        for key in [k for k in os.environ if k.upper().startswith(SECRET_ENV_PREFIXES)]:
            del os.environ[key]  # a node started with tokens in its environment does not pass them on
        os.environ["KERNEL_ENV_BACKEND"] = kind  # a CPU actor on a GPU node still serves modeled evaluations
        self.name, self.kind = name, kind
        self.node_id = ray.get_runtime_context().get_node_id()
        self.pool = EvaluatorPool(workers)
        self.pool.describe()  # warm now: the first evaluation does not pay the interpreter start
        self.active = 0
        self.served = 0
        self._lock = threading.Lock()

    def run(self, request: dict[str, Any], session: str, timeout_s: float) -> dict[str, Any]:
        """An EvalRequest's JSON in, an EvalReply's JSON out (validated again by the API server)."""
        with self._lock:
            self.active += 1
        started = time.perf_counter()
        try:
            response = self.pool.run(EvalRequest.model_validate(request), session, timeout_s)
        finally:
            with self._lock:
                self.active -= 1
                self.served += 1
        return response.model_copy(update={"actor": self.name, "node_id": self.node_id,
                                           "actor_s": time.perf_counter() - started}).model_dump(mode="json")

    def describe(self) -> dict[str, Any]:
        return dict(self.pool.describe(), actor=self.name, kind=self.kind, node_id=self.node_id,
                    hostname=socket.gethostname(), pid=os.getpid(), served=self.served)

    def busy(self) -> int:
        """Evaluations running or queued in this actor now."""
        return self.active


@dataclass
class _Slot:
    name: str
    kind: str
    handle: Any
    free: int
    down: bool = False
    granted: int = 0     # requests sent so far: ties go to the least used actor, so work spreads over nodes


class RayBackend:
    """The evaluation backend on a Ray cluster (KERNEL_ENV_RAY_ADDRESS). Connects on first use."""

    def __init__(self, config: Optional[RayConfig] = None) -> None:
        self.config = config or RayConfig()
        self._connect_lock = threading.Lock()
        self._actors: Optional[list[_Slot]] = None
        self._queues = {"cpu": FairQueue(), "cuda": FairQueue()}
        self.served_by_node: dict[str, int] = {}

    # -- the actors -----------------------------------------------------------------------
    def actors(self) -> list[_Slot]:
        with self._connect_lock:
            if self._actors is None:
                self._actors = self._start_actors()
            return self._actors

    def _start_actors(self) -> list[_Slot]:
        try:
            import ray
        except ImportError:
            raise RuntimeError(f"KERNEL_ENV_RAY_ADDRESS is set but Ray is not installed: {INSTALL_HINT}") from None
        cfg = self.config
        if not ray.is_initialized():
            ray.init(address=cfg.address, namespace=cfg.namespace, log_to_driver=False)
        remote = ray.remote(EvaluationActor)
        slots = []
        for kind, count in (("cpu", cfg.cpu_actors), ("cuda", cfg.gpu_actors)):
            for i in range(count):
                name = f"kernel_env-{kind}-{i}"
                handle = remote.options(
                    name=name, namespace=cfg.namespace, lifetime="detached", get_if_exists=True,
                    max_restarts=-1, max_task_retries=0,  # at most once: the one retry is ours, with a note
                    max_concurrency=cfg.workers_per_actor + 64,  # waiting calls queue fairly in the actor's pool
                    num_cpus=cfg.actor_cpus, num_gpus=1 if kind == "cuda" else 0, scheduling_strategy="SPREAD",
                ).remote(name, kind, cfg.workers_per_actor)
                slots.append(_Slot(name, kind, handle, cfg.workers_per_actor))
        log.info("Ray backend at %s: %d CPU and %d GPU actors", cfg.address, cfg.cpu_actors, cfg.gpu_actors)
        return slots

    def _take(self, kind: str, avoid: set[str]):
        """Under the queue's lock: the serving actor with most free slots (not one that just failed)."""
        group = [a for a in self._actors if a.kind == kind]
        usable = [a for a in group if a.name not in avoid and not a.down] or \
            [a for a in group if a.name not in avoid] or group
        best = max(usable, key=lambda a: (a.free, -a.granted), default=None)
        if best is None or best.free <= 0:
            return None
        best.free -= 1
        best.granted += 1
        return best

    def _release(self, kind: str, slot: _Slot) -> None:
        with self._queues[kind].lock:
            slot.free += 1
            self._queues[kind].lock.notify_all()

    # -- the backend interface ------------------------------------------------------------
    def run(self, request: EvalRequest, session: str, timeout_s: float) -> EvalReply:
        try:
            actors = self.actors()
        except Exception as exc:  # Ray missing or the cluster unreachable: the environment's failure
            return EvalReply(kind="crash", error=f"the Ray backend is unavailable ({exc})")
        kind = request.backend
        if not any(a.kind == kind for a in actors):
            return EvalReply(kind="crash", error=f"no Ray actor serves the {kind} backend; set "
                                                 f"KERNEL_ENV_RAY_{'GPU' if kind == 'cuda' else 'CPU'}_ACTORS")
        lost: list[str] = []
        avoid: set[str] = set()
        for _attempt in range(2):
            slot = self._queues[kind].acquire(session, lambda: self._take(kind, avoid))
            try:
                response = reply_of(self._call(slot, request.model_dump(mode="json"), session, timeout_s))
            except Exception as exc:  # any Ray error: the actor, its node or the call was lost
                lost.append(f"{slot.name} ({type(exc).__name__})")
                avoid.add(slot.name)
                self._mark_down(slot)
                log.warning("evaluation lost on %s: %s", slot.name, exc)
                continue
            finally:
                self._release(kind, slot)
            with self._queues[kind].lock:
                self.served_by_node[response.node_id] = self.served_by_node.get(response.node_id, 0) + 1
            if lost:
                response.notes = [f"the evaluation worker {lost[0]} was lost; the evaluation was retried once "
                                  f"on {slot.name} (node {response.node_id[:12]})"]
            return response
        return EvalReply(kind="crash", error=f"the evaluation was lost twice on the Ray cluster ({'; then '.join(lost)}); "
                                             "nothing was scored, send the same submission again")

    def _call(self, slot: _Slot, request: dict[str, Any], session: str, timeout_s: float) -> dict[str, Any]:
        import ray
        ref = slot.handle.run.remote(request, session, timeout_s)
        return ray.get(ref, timeout=timeout_s + self.config.call_slack_s)

    def _mark_down(self, slot: _Slot) -> None:
        """Skip the actor until it answers again (Ray restarts it, on another node if its node died)."""
        if slot.down:
            return
        slot.down = True
        threading.Thread(target=self._revive, args=(slot,), daemon=True, name=f"revive-{slot.name}").start()

    def _revive(self, slot: _Slot) -> None:
        import ray
        while True:
            try:
                ray.get(slot.handle.busy.remote(), timeout=60)
                break
            except Exception:  # still restarting or unschedulable: ask again
                time.sleep(1.0)
        with self._queues[slot.kind].lock:
            slot.down = False
            self._queues[slot.kind].lock.notify_all()

    def describe(self) -> dict[str, Any]:
        """The server's backend plus every actor's node, sandbox layers and workers (GET /sandbox)."""
        import ray
        entries = []
        for slot in self.actors():
            try:
                entries.append(ray.get(slot.handle.describe.remote(), timeout=300))
            except Exception as exc:
                entries.append({"actor": slot.name, "kind": slot.kind, "error": f"{type(exc).__name__}: {exc}"})
        kind = self.config.backend
        mine = [e for e in entries if e.get("kind") == kind and "layers" in e]
        return {"backend": kind, "layers": mine[0]["layers"] if mine else {},
                "workers": sum(e.get("workers", 0) for e in mine),
                "ray": {"address": self.config.address, "namespace": self.config.namespace}, "nodes": entries}

    def close(self) -> None:
        """The actors are shared with other API servers: leave them running."""
