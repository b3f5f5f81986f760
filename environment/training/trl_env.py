"""kernel_env as a TRL ``environment_factory`` (GRPOTrainer, TRL >= 1.16), over the WebSocket client.

How TRL uses it (trl/trainer/grpo_trainer.py): it calls the factory once per rollout of a generation
batch and keeps the instances in a pool, reused across batches; before each generation it calls
``reset(**row)`` with the whole dataset row; every public method with a docstring other than
``reset`` and ``get_reward`` is a tool the model may call (here only ``submit_kernel``); after the
rollout it calls ``get_reward()``, which makes the environment own the reward.

- One WebSocket session per rollout: each instance holds its own ``KernelEnv`` connection, opened on
  first reset and reused (reset starts a new episode on it). A generation batch of N rollouts holds
  N sessions, so the server's ``max_concurrent_envs`` (``KERNEL_ENV_MAX_SESSIONS``, default 64) must
  be at least N plus whatever else plays there (the playground, other runs).
- Reward rule: ``environment.training.episode_reward`` (best judged step; 0.0 when the model never
  submitted; ``None`` when the environment failed during the episode). TRL turns ``None`` into NaN
  and gives that rollout no advantage: a harness error is reported (logged, counted in
  ``factory.stats``), never scored as the submission's.
- Every rollout is written as an ``EpisodeRecord`` (the playground / inference.py format) by an
  ``EpisodeRecorder``, so it opens in the playground's Replay tab.

>>> factory = KernelEnvFactory("http://127.0.0.1:8000", recorder=EpisodeRecorder("rollouts.jsonl"))
>>> GRPOTrainer(model, args=config, train_dataset=build_dataset(url, ["gelu_bias"], seeds=range(8)),
...             environment_factory=factory)
"""
from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from environment.agent import SYSTEM_PROMPT, build_messages, feedback_message, summarize_action, summarize_step
from environment.client import KernelEnv
from environment.driver import unsendable
from environment.models import KernelAction, KernelObservation
from environment.training.reward_rule import episode_reward
from environment.trajectory import EpisodeRecord, Message, export_rows, env_version, step_record

log = logging.getLogger("kernel_env.trl")
_STATS_LOCK = threading.Lock()   # counters are shared by a factory's instances, bumped from run-ahead threads too
STEP_TIMEOUT_S = 600.0  # a Triton step under the interpreter on a loaded CPU host can take minutes

TOOL_INSTRUCTIONS = (
    "\n\nHow to submit: call the `submit_kernel` tool with the complete module as `code`. It returns the "
    "environment's report (correctness, speed, flags). You may submit again to improve, up to the number of "
    "submissions stated in the task; your best submission counts.")
CURRICULUM_PROMPT = "The environment picks your task; it follows."
FEEDBACK_MODES = ("full", "terse")
TERSE_LINES = ("Hint:", "Next:", "Reward hack detected", "  First failure:")
TERSE_MAX_CHARS = 600
TOOL_NAME = "submit_kernel"


def terse_feedback_message(observation: Any) -> str:
    """The step's one-line result plus only the actionable lines of the environment's report (first failure,
    hack verdict, hints, next move), at most TERSE_MAX_CHARS: a few turns of it fit a completion budget."""
    report = str(getattr(observation, "feedback", "") or "")
    lines = [f"Result: {summarize_step(observation)}"]
    lines += [" ".join(line.split()) for line in report.splitlines() if line.startswith(TERSE_LINES)]
    text = "\n".join(lines)
    return text if len(text) <= TERSE_MAX_CHARS else text[:TERSE_MAX_CHARS - 3] + "..."


def submit_calls(messages: Sequence[dict[str, Any]]) -> list[Any]:
    """The ``code`` of every submit_kernel call in a rollout's messages that TRL will execute (a function call
    named submit_kernel whose arguments are exactly ``code``), in order."""
    calls = []
    for message in messages:
        for call in (message.get("tool_calls") or []) if message.get("role") == "assistant" else []:
            function = call.get("function") or {}
            args = function.get("arguments")
            if call.get("type") == "function" and function.get("name") == TOOL_NAME \
                    and isinstance(args, dict) and set(args) == {"code"}:
                calls.append(args["code"])
    return calls


class EpisodeRecorder:
    """Collects finished rollouts as EpisodeRecords and appends each, scrubbed, to a JSONL file (an existing
    file is appended to, never truncated)."""

    def __init__(self, path: Optional[str | Path] = None):
        self.path = Path(path) if path else None
        self.records: list[EpisodeRecord] = []
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, record: EpisodeRecord) -> None:
        with self._lock:
            self.records.append(record)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(export_rows([record])[0], ensure_ascii=False) + "\n")


class KernelToolEnv:
    """One rollout's environment: a kernel_env episode played through the ``submit_kernel`` tool."""

    def __init__(self, base_url: str, *, recorder: Optional[EpisodeRecorder] = None, model: Optional[str] = None,
                 stats: Optional[dict[str, int]] = None, step_timeout_s: float = STEP_TIMEOUT_S,
                 feedback: str = "full"):
        if feedback not in FEEDBACK_MODES:
            raise ValueError(f"feedback must be one of {FEEDBACK_MODES}, not {feedback!r}")
        self._base_url = base_url.rstrip("/")
        self._feedback = feedback
        self._recorder = recorder
        self._model = model
        self._stats = stats if stats is not None else {}
        self._timeout = step_timeout_s
        self._client: Any = None
        self._record: Optional[EpisodeRecord] = None
        self._obs: Optional[KernelObservation] = None
        self._error: Optional[str] = None   # the environment failed (lost connection, harness error)
        self._finished = True
        self._calls = 0   # submit_kernel calls begun this episode (run ahead or not)
        self._ahead: Optional[tuple[Any, Future]] = None   # a call begun before TRL made it (ParallelToolCalls)
        self._before_call: Optional[Callable[[], None]] = None
        self.episode_id: Optional[str] = None
        self.last_reward: Optional[float] = None

    # -- the TRL contract --------------------------------------------------------------------
    def reset(self, task_id: Optional[str] = None, seed: Optional[int] = None, max_turns: Optional[int] = None,
              curriculum: Optional[str] = None, prompt: Any = None, **_row: Any) -> Optional[str]:
        """Start an episode from a dataset row (TRL passes every column; unknown ones are ignored)."""
        self._finish()
        self.episode_id, self.last_reward, self._error, self._calls = uuid.uuid4().hex, None, None, 0
        kwargs: dict[str, Any] = {"episode_id": self.episode_id}
        for name, value in (("task_id", task_id), ("seed", seed), ("max_turns", max_turns),
                            ("curriculum", curriculum)):
            if value is not None:
                kwargs[name] = int(value) if name in ("seed", "max_turns") else value
        try:
            self._obs = self._connect().reset(**kwargs).observation
        except Exception:
            self._close()
            raise
        messages = prompt if isinstance(prompt, list) else build_messages(self._obs)
        self._record = EpisodeRecord.start(self._obs, episode_id=self.episode_id, seed=seed, player="model",
                                           model=self._model, env_version=env_version())
        self._record.prompt = [Message(role=m["role"], content=m["content"]) for m in messages]
        self._record.refresh()
        self._finished = False
        self._count("rollouts")
        # a row without a task (curriculum) carries no task text: hand TRL the one the server chose
        return None if task_id else "\n\n" + build_messages(self._obs)[1]["content"]

    def submit_kernel(self, code: str) -> str:
        """
        Submit a complete Python module defining `class ModelNew(torch.nn.Module)` for evaluation.

        Args:
            code: The full Python source: imports, any Triton kernels, and ModelNew with the reference Model's constructor and forward signature.

        Returns:
            The environment's report on this submission: correctness, speedup, flags, score and how to improve.
        """
        if self._before_call is not None:
            self._before_call()
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            if ahead[0] == code:
                return ahead[1].result()
            self._count("ahead_mismatch")   # never expected: the call run ahead is not the one TRL made
            log.error("episode %s: a submission run ahead differs from the one TRL made", self.episode_id)
            ahead[1].result()
        self._calls += 1
        return self._submit(code)

    def _run_ahead(self, code: Any, pool: ThreadPoolExecutor) -> None:
        """Begin the next submit_kernel call on ``pool``; the call TRL then makes with the same code collects it."""
        self._calls += 1
        self._ahead = (code, pool.submit(self._submit, code))

    def _submit(self, code: Any) -> str:
        if self._record is None or self._finished or (self._obs is not None and self._obs.done):
            return "The episode is over: no more submissions are accepted."
        if self._error:
            return f"The environment failed earlier in this episode ({self._error}); no more submissions are judged."
        too_large = unsendable(str(code))
        if too_large:  # the model's error, refused before the wire (KernelAction.code has a max_length)
            return f"Not submitted: {too_large}."
        t0 = time.monotonic()
        try:
            obs = self._connect().step(KernelAction(code=str(code))).observation
        except Exception as e:  # the connection or the server failed: the environment's failure, not the model's
            self._fail(f"the environment connection failed: {' '.join(str(e).split())[:300]}")
            self._close()
            return f"Environment error (not your submission's fault): {self._error}"
        n = len(self._record.steps) + 1
        self._record.add_step(step_record(n, code, obs, action_summary=summarize_action(code), done=obs.done,
                                          env_latency_ms=(time.monotonic() - t0) * 1000.0,
                                          prompt_messages=self._record.prompt if n == 1 else []))
        self._obs = obs
        if obs.outcome == "harness_error":
            self._fail(f"harness error on step {n}: {obs.error}")
            return (f"Environment error (not your submission's fault; no turn used): {obs.error}. "
                    "This episode will not be scored.")
        return terse_feedback_message(obs) if self._feedback == "terse" else feedback_message(obs)

    def get_reward(self) -> Optional[float]:
        """The episode's reward under ``episode_reward`` (None when the environment failed)."""
        reward = None if self._error or self._record is None else episode_reward(self._record.rewards)
        self.last_reward = reward
        if reward is None:
            log.warning("episode %s (%s) is not scored: %s", self.episode_id,
                        self._record.task_id if self._record else "?", self._error or "no episode was started")
            self._count("unscored")
        self._finish()
        return reward

    # -- internals (private: TRL would expose public methods as tools) ------------------------
    def _fail(self, message: str) -> None:
        self._error = self._error or message
        self._count("environment_errors")
        log.error("episode %s: %s", self.episode_id, message)

    def _count(self, key: str) -> None:
        with _STATS_LOCK:
            self._stats[key] = self._stats.get(key, 0) + 1

    def _finish(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:   # never expected: a call run ahead that TRL did not make
            self._count("ahead_unclaimed")
            ahead[1].result()
        if self._record is not None and not self._finished:
            self._finished = True
            if self._recorder is not None:
                self._recorder.add(self._record)

    def _connect(self) -> Any:
        if self._client is None:
            self._client = KernelEnv(base_url=self._base_url, message_timeout_s=self._timeout).sync()
            self._client.connect()
        return self._client

    def _close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # already gone
                pass


class KernelEnvFactory:
    """The ``environment_factory`` to pass to GRPOTrainer: builds KernelToolEnvs sharing a recorder and
    counters (``stats``: rollouts, unscored, environment_errors, run_ahead), and closes their sessions at the end.

    ``feedback="terse"`` makes submit_kernel return the short report (``terse_feedback_message``) so that several
    turns fit a completion budget. ``parallel`` (the most evaluations one trainer keeps in flight) is used by
    ``watch``: see ``ParallelToolCalls`` in ``environment.training.trainer``."""

    def __init__(self, base_url: str, *, recorder: Optional[EpisodeRecorder] = None, model: Optional[str] = None,
                 step_timeout_s: float = STEP_TIMEOUT_S, feedback: str = "full", parallel: int = 64):
        if feedback not in FEEDBACK_MODES:
            raise ValueError(f"feedback must be one of {FEEDBACK_MODES}, not {feedback!r}")
        self.base_url = base_url
        self.recorder = recorder or EpisodeRecorder()
        self.model = model
        self.step_timeout_s = step_timeout_s
        self.feedback = feedback
        self.parallel = parallel
        self.stats: dict[str, int] = {}
        self.instances: list[KernelToolEnv] = []
        self._pool: Optional[ThreadPoolExecutor] = None
        self._batch: Optional[tuple[Sequence[KernelToolEnv], Sequence[Sequence[dict[str, Any]]]]] = None

    def __call__(self) -> KernelToolEnv:
        env = KernelToolEnv(self.base_url, recorder=self.recorder, model=self.model, stats=self.stats,
                            step_timeout_s=self.step_timeout_s, feedback=self.feedback)
        env._before_call = self._run_pending
        self.instances.append(env)
        return env

    @contextlib.contextmanager
    def watch(self, environments: Sequence[KernelToolEnv], completions: Sequence[Sequence[dict[str, Any]]]):
        """While TRL runs its tool loop over ``completions`` (one message list per rollout, the lists TRL itself
        appends to) with ``environments`` (the same order), the first submit_kernel call TRL makes in a round begins
        every rollout's pending call at once; TRL's own calls, one after another, then collect the results."""
        if self.parallel > 1 and self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="kernel-env-step")
        self._batch = (environments, completions) if self.parallel > 1 else None
        try:
            yield
        finally:
            self._batch = None

    def _run_pending(self) -> None:
        """Begin every rollout's next call that TRL is certain to make: its messages hold more submit_kernel calls
        than its environment has begun (a round TRL rolled back as overlong was still executed, so it counts)."""
        if self._batch is None or self._pool is None:
            return
        for env, messages in zip(*self._batch):
            if isinstance(env, KernelToolEnv) and env._ahead is None:
                calls = submit_calls(messages)
                if len(calls) > env._calls:
                    env._run_ahead(calls[env._calls], self._pool)
                    env._count("run_ahead")

    def close(self) -> None:
        for env in self.instances:
            env._finish()
            env._close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def build_rows(base_url: str, task_ids: Sequence[str] = (), seeds: Iterable[int] = range(4), *, max_turns: int = 2,
               curriculum: Optional[str] = None) -> list[dict[str, Any]]:
    """Dataset rows, task x seed: ``prompt`` (system + task, from ``environment.agent.build_messages`` on the
    server's own reset observation, plus how to call the tool), ``task_id``, ``seed``, ``max_turns``.

    With ``curriculum`` the rows carry no task: ``reset(curriculum=...)`` lets the server choose, and the
    chosen task's text is appended to the prompt at reset. ``task_ids`` is then ignored.
    """
    seeds = [int(s) for s in seeds]
    system = {"role": "system", "content": SYSTEM_PROMPT + TOOL_INSTRUCTIONS}
    if curriculum:
        return [{"prompt": [system, {"role": "user", "content": CURRICULUM_PROMPT}], "seed": s,
                 "max_turns": max_turns, "curriculum": curriculum} for s in seeds]
    if not task_ids:
        raise ValueError("build_rows needs task ids (e.g. ['gelu_bias']) or a curriculum name")
    client = KernelEnv(base_url=base_url.rstrip("/"), message_timeout_s=120).sync()
    client.connect()
    try:
        prompts = {t: build_messages(client.reset(task_id=t, seed=0, max_turns=max_turns).observation)[1]
                   for t in task_ids}
    finally:
        client.close()
    return [{"prompt": [system, prompts[t]], "task_id": t, "seed": s, "max_turns": max_turns}
            for t in task_ids for s in seeds]


def build_dataset(base_url: str, task_ids: Sequence[str] = (), seeds: Iterable[int] = range(4), **kwargs: Any):
    """``build_rows`` as a ``datasets.Dataset`` (what GRPOTrainer's ``train_dataset`` takes)."""
    from datasets import Dataset
    return Dataset.from_list(build_rows(base_url, task_ids, seeds, **kwargs))
