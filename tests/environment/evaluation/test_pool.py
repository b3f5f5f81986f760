"""The evaluator pool: fair across sessions, secrets kept out of evaluator processes, crash recovery."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from environment.config import harness_config
from environment.evaluation.evaluator.inputs import seed_plan
from environment.evaluation.transport.pool import EvaluatorPool, child_environment
from environment.evaluation.transport.request import EvalRequest, reply_of
from environment.evaluation.static.checks import check_source
from environment.tasks import get_task

TASK = get_task("gelu_bias")
SOURCE = next(p for p in TASK.solutions["correct"] if p.name.startswith("torch")).read_text()


def _request(seed: int) -> EvalRequest:
    return EvalRequest.of(TASK, SOURCE, seed_plan(b"k", seed, TASK.id, "", 5), harness_config(),
                          check_source(SOURCE, TASK.reference_code), "cpu")


def _wait_until_queued(pool: EvaluatorPool, n: int) -> None:
    """Block until n requests wait for the worker (a condition, not a timing assumption)."""
    with pool._lock:
        while len(pool._waiting) < n:
            pool._lock.wait(1.0)


def test_a_waiting_session_is_served_before_a_busy_sessions_backlog():
    pool = EvaluatorPool(1)
    pool.describe()  # one warm zygote
    order: list[str] = []
    lock = threading.Lock()

    def submit(session: str, seed: int) -> None:
        response = pool.run(_request(seed), session, 120)
        assert response.kind == "result"
        with lock:
            order.append(session)

    # The trainer's first evaluation holds the only worker until every other request is queued:
    # two more of the trainer's, then the person's, in that order.
    held = pool._acquire("trainer")
    threads = []
    try:
        for i, session in enumerate(["trainer", "trainer", "person"]):
            threads.append(threading.Thread(target=submit, args=(session, i)))
            threads[-1].start()
            _wait_until_queued(pool, i + 1)
        pool._release(held)
        for t in threads:
            t.join(300)
    finally:
        pool.close()
    assert len(order) == 3, order
    # served 1 (trainer) vs 0 (person): the person's request, queued last, goes first
    assert order[0] == "person", order


def test_evaluator_processes_never_inherit_tokens(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value_123")
    monkeypatch.setenv("API_KEY", "sk-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    env = child_environment()
    assert not {"HF_TOKEN", "API_KEY", "OPENAI_API_KEY"} & set(env)
    assert "hf_secret_value_123" not in "".join(env.values())


def test_the_evaluators_environment_does_not_depend_on_what_the_server_imported_first(monkeypatch):
    """torch writes inductor's cache folder into os.environ when first asked: a zygote started after that must
    see the same environment as one started before (a172's verdict once depended on it)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    before = child_environment()
    cache_dir()
    assert "TORCHINDUCTOR_CACHE_DIR" in os.environ
    assert child_environment() == before


def test_a_zygote_that_died_while_idle_is_replaced_transparently():
    pool = EvaluatorPool(1)
    try:
        pool.describe()
        zygote = pool._idle[0]
        os.kill(zygote.proc.pid, 9)
        zygote.proc.wait()
        response = pool.run(_request(1), "s", 120)
        assert response.kind == "result" and response.result.correctness.correct
        assert pool._idle and pool._idle[0] is not zygote
    finally:
        pool.close()


def test_the_local_pool_is_the_default_backend_and_needs_no_ray(monkeypatch):
    from environment.config import detect_backend
    from environment.evaluation.transport.dispatch import backend_kind, make_backend
    monkeypatch.delenv("KERNEL_ENV_RAY_ADDRESS", raising=False)
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # as if the extra were not installed
    backend = make_backend(1)
    assert isinstance(backend, EvaluatorPool) and backend_kind() == detect_backend()


def test_closing_a_pool_leaves_no_traceback_from_its_spare_processes():
    # a pool forks its evaluator and children ahead of requests; closing it closes their channels
    # before anything came, which is an ending, not a failure to print on the server's stderr
    script = ("from tests.environment.evaluation.test_pool import _request; from environment.evaluation.transport.pool import EvaluatorPool\n"
              "pool = EvaluatorPool(1)\n"
              "assert pool.run(_request(0), 's', 120).kind == 'result'\n"
              "pool.close()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def test_evaluators_allocate_large_tensors_in_huge_pages_unless_told_not_to(monkeypatch):
    """GPU-shape inputs and outputs are up to 256 MiB a tensor: glibc's malloc asks for transparent huge
    pages in the evaluators (a fresh 128 MiB fill takes a fifth of the time where the host allows them).
    An operator's own tunable wins, and KERNEL_ENV_HUGE_PAGES=0 turns it off."""
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    monkeypatch.delenv("KERNEL_ENV_HUGE_PAGES", raising=False)
    assert child_environment()["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    assert child_environment()["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")
    assert child_environment()["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=0"
    monkeypatch.delenv("GLIBC_TUNABLES")
    monkeypatch.setenv("KERNEL_ENV_HUGE_PAGES", "0")
    assert "GLIBC_TUNABLES" not in child_environment()
    monkeypatch.delenv("KERNEL_ENV_HUGE_PAGES")
    pool = EvaluatorPool(1)   # the real zygote runs with it
    try:
        pool.describe()
        with open(f"/proc/{pool._idle[0].proc.pid}/environ", "rb") as fh:
            assert b"GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in fh.read().split(b"\0")
    finally:
        pool.close()


def test_the_request_round_trips_as_json_and_rebuilds_the_task():
    request = _request(3)
    again = EvalRequest.model_validate_json(request.model_dump_json())
    assert again == request
    task = again.task_of()
    assert task.id == TASK.id and task.reference_path == TASK.reference_path and task.solutions == {}
    assert task.cpu_shapes == TASK.cpu_shapes and again.seeds.trials == request.seeds.trials


def test_a_request_with_an_unknown_field_or_a_wrong_type_is_refused_on_receipt():
    import pytest
    from pydantic import ValidationError
    data = _request(3).model_dump(mode="json")
    for bad in (dict(data, secret="x"), dict(data, backend="tpu"), dict(data, seeds=dict(data["seeds"], init="x"))):
        with pytest.raises(ValidationError):
            EvalRequest.model_validate(bad)


def test_a_reply_that_does_not_validate_is_the_environments_failure_named():
    assert reply_of({"kind": "result"}).kind == "crash"
    bad = reply_of({"kind": "result", "result": {"task_id": "t", "outcome": "no such outcome"}})
    assert bad.kind == "crash" and "malformed reply" in bad.error and "result" in bad.error
    assert reply_of({"kind": "maybe"}).kind == "crash"
    assert reply_of({"kind": "timeout", "error": "slow", "id": "1"}).error == "slow"


def test_an_evaluator_sent_a_malformed_request_answers_a_crash_and_the_zygote_serves_the_next():
    import time

    import torch

    from environment.evaluation.transport import frames
    from environment.evaluation.transport.pool import Zygote
    zygote = Zygote()
    try:
        body = torch.frombuffer(bytearray(b'{"source": 1}'), dtype=torch.uint8)
        envelope = {"kind": "request", "id": "bad", "nonce": "n" * 32, "budget_s": 60.0}
        frames.write_frame(zygote.proc.stdin.fileno(), frames.encode(envelope, [body]))
        header, _ = frames.read_frame(zygote.proc.stdout.fileno(), None, time.monotonic() + 120)
        assert header["kind"] == "crash" and header["id"] == "bad"
        good = zygote.call(_request(4).model_copy(update={"id": "good", "nonce": "m" * 32}), 120)
        assert good.kind == "result" and good.id == "good" and good.result.correctness.correct
    finally:
        zygote.close()
