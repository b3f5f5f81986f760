"""The evaluator pool: fair across sessions, secrets kept out of evaluator processes, crash recovery."""
from __future__ import annotations

import os
import threading
import time

from environment.config import harness_config
from environment.evaluation.inputs import derive_seeds
from environment.evaluation.pool import EvaluatorPool, child_environment, config_payload, task_payload
from environment.evaluation.static_checks import check_source
from environment.tasks import get_task

TASK = get_task("gelu_bias")
SOURCE = next(p for p in TASK.solutions["correct"] if p.name.startswith("torch")).read_text()


def _request(seed: int) -> dict:
    config = harness_config()
    return {"task": task_payload(TASK), "source": SOURCE, "seeds": derive_seeds(b"k", seed, TASK.id, "", 6),
            "config": config_payload(config), "static": check_source(SOURCE, TASK.reference_code).model_dump(),
            "backend": "cpu"}


def test_a_waiting_session_is_served_before_a_busy_sessions_backlog():
    pool = EvaluatorPool(1)
    pool.describe()  # one warm zygote
    order: list[str] = []
    lock = threading.Lock()

    def submit(session: str, seed: int) -> None:
        response = pool.run(_request(seed), session, 120)
        assert response["kind"] == "result"
        with lock:
            order.append(session)

    try:
        busy = [threading.Thread(target=submit, args=("trainer", i)) for i in range(3)]
        for t in busy:
            t.start()
            time.sleep(0.05)
        person = threading.Thread(target=submit, args=("person", 99))
        person.start()
        for t in busy + [person]:
            t.join(300)
    finally:
        pool.close()
    # the first trainer request was already running; the person's comes right after it
    assert order.index("person") <= 1, order


def test_evaluator_processes_never_inherit_tokens(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value_123")
    monkeypatch.setenv("API_KEY", "sk-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    env = child_environment()
    assert not {"HF_TOKEN", "API_KEY", "OPENAI_API_KEY"} & set(env)
    assert "hf_secret_value_123" not in "".join(env.values())


def test_a_zygote_that_died_while_idle_is_replaced_transparently():
    pool = EvaluatorPool(1)
    try:
        pool.describe()
        zygote = pool._idle[0]
        os.kill(zygote.proc.pid, 9)
        zygote.proc.wait()
        response = pool.run(_request(1), "s", 120)
        assert response["kind"] == "result" and response["result"]["correctness"]["correct"]
        assert pool._idle and pool._idle[0] is not zygote
    finally:
        pool.close()
