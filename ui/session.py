"""Per-browser-session episodes: each session plays its own environments over the WebSocket client.

OpenEnv's web manager shares one environment between all visitors, so the playground instead
opens its own ``KernelEnv`` connection per player slot ("play", "compare-a", "compare-b") of
each browser session, kept in a server-side dict keyed by ``request.session_hash`` (a client
object cannot live in ``gr.State``, which is deep-copied) and closed on ``demo.unload``.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from environment.agent import build_messages, summarize_action
from environment.client import KernelEnv
from environment.models import KernelAction, KernelObservation
from environment.trajectory import EpisodeRecord, StepRecord, env_version, step_record

ENV_URL_VAR = "KERNEL_PLAYGROUND_ENV_URL"  # overrides where the playground plays (default: this server)
STEP_TIMEOUT_S = 300.0  # a Triton step under the interpreter on a loaded host can take a while
MAX_EPISODES_KEPT = 200  # per session, for the export


class PlayError(Exception):
    """A problem to show in the page as it is (bad input, busy session, lost connection)."""


def env_base_url(request: Any = None) -> str:
    """This server, reached over loopback at the port the request came in on (or $PORT)."""
    override = os.environ.get(ENV_URL_VAR)
    if override:
        return override.rstrip("/")
    server = None
    raw = getattr(request, "request", None) if request is not None else None
    scope = getattr(raw, "scope", None)
    if isinstance(scope, dict):
        server = scope.get("server")
    port = server[1] if server and server[1] else int(os.environ.get("PORT", "8000"))
    return f"http://127.0.0.1:{port}"


@dataclass
class EpisodeHandle:
    """One player slot: its environment connection and the episode it is playing."""

    base_url: str
    env: Any = None
    record: Optional[EpisodeRecord] = None
    obs: Optional[KernelObservation] = None     # the latest observation (reset or step)
    stepped: list[KernelObservation] = field(default_factory=list)
    best_code: Optional[str] = None
    best_score: float = 0.0
    last_code: Optional[str] = None
    last_error: Optional[str] = None
    done: bool = True

    def _connect(self) -> Any:
        if self.env is None:
            try:
                self.env = KernelEnv(base_url=self.base_url, message_timeout_s=STEP_TIMEOUT_S).sync()
                self.env.connect()
            except Exception as e:
                self.env = None
                raise PlayError(f"cannot reach the environment at {self.base_url}: {_one_line(e)}") from None
        return self.env

    def close(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            try:
                env.close()
            except Exception:  # the connection is already gone; nothing to release
                pass

    def reset(self, task_id: str, seed: int, max_turns: int, *, player: str, model: Optional[str] = None,
              temperature: Optional[float] = None) -> KernelObservation:
        for attempt in (1, 2):  # a connection the server dropped while idle is reopened once
            env = self._connect()
            try:
                result = env.reset(task_id=task_id, seed=seed, max_turns=max_turns)
                break
            except Exception as e:
                self.close()
                if attempt == 2 or not _is_connection_error(e):
                    raise PlayError(f"reset failed: {_one_line(e)}") from None
        self.obs = result.observation
        self.record = EpisodeRecord.start(self.obs, seed=seed, player=player, model=model,
                                          temperature=temperature, env_version=env_version())
        self.stepped, self.best_code, self.best_score = [], None, 0.0
        self.last_code = self.last_error = None
        self.done = False
        return self.obs

    def _check_running(self) -> None:
        if self.record is None:
            raise PlayError("no episode yet: pick a task and press New episode")
        if self.done:
            raise PlayError("this episode is over: press New episode to play again")

    def submit(self, code: str, *, finish: bool = False, latency_ms: float = 0.0,
               prompt_messages: Optional[list[dict[str, str]]] = None, raw_reply: Optional[str] = None) -> StepRecord:
        self._check_running()
        if not code or not code.strip():
            raise PlayError("the editor is empty: write ModelNew (or load the demo solution) first")
        n = len(self.record.steps) + 1
        t0 = time.monotonic()
        try:
            result = self._connect().step(KernelAction(code=code, finish=finish))
        except PlayError:
            raise
        except Exception as e:  # the connection or the server failed: the episode cannot go on
            self.close()
            self.done = True
            step = step_record(n, code, action_summary=summarize_action(code), done=True,
                               error=f"environment step failed: {_one_line(e)}", latency_ms=latency_ms,
                               env_latency_ms=_ms(t0), prompt_messages=prompt_messages or [], raw_reply=raw_reply)
            self.record.add_step(step)
            return step
        obs = result.observation
        step = step_record(n, code, obs, action_summary=summarize_action(code), done=result.done,
                           reward=result.reward, latency_ms=latency_ms, env_latency_ms=_ms(t0),
                           prompt_messages=prompt_messages or [], raw_reply=raw_reply)
        self.record.add_step(step)
        self.obs, self.done = obs, bool(result.done) or n >= self.record.max_turns
        self.stepped.append(obs)
        self.last_code, self.last_error = code, None
        if obs.score > self.best_score or self.best_code is None:
            self.best_code, self.best_score = code, obs.score
        return step

    def no_code(self, error: str, *, latency_ms: float, prompt_messages: list[dict[str, str]],
                raw_reply: Optional[str]) -> StepRecord:
        """A model turn that produced nothing to submit: recorded, and the episode goes on."""
        self._check_running()
        n = len(self.record.steps) + 1
        # As in inference.py, a failed attempt uses up a turn: a model that never answers with code
        # cannot hold the episode open forever.
        done = n >= self.record.max_turns
        step = step_record(n, None, error=error, latency_ms=latency_ms, prompt_messages=prompt_messages,
                           raw_reply=raw_reply, done=done)
        self.record.add_step(step)
        self.last_error, self.done = error, done
        return step

    def model_messages(self) -> list[dict[str, str]]:
        self._check_running()
        return build_messages(self.obs, self.best_code, self.stepped[:-1],
                              best_score=self.best_score if self.best_code else None,
                              last_code=self.last_code, last_error=self.last_error)


class Session:
    """Everything one browser session owns: its player slots and every episode it played."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.slots: dict[str, EpisodeHandle] = {}
        self.episodes: list[EpisodeRecord] = []
        self.locks = {"play": threading.Lock(), "compare": threading.Lock()}
        self.stop_requested = False
        self.replay: list[EpisodeRecord] = []
        self.last_seen = time.monotonic()

    def slot(self, name: str) -> EpisodeHandle:
        if name not in self.slots:
            self.slots[name] = EpisodeHandle(self.base_url)
        return self.slots[name]

    def started(self, record: EpisodeRecord) -> None:
        self.episodes.append(record)
        del self.episodes[:-MAX_EPISODES_KEPT]

    def exportable(self) -> list[EpisodeRecord]:
        return [r for r in self.episodes if r.steps]

    def close(self) -> None:
        for handle in self.slots.values():
            handle.close()


class Sessions:
    def __init__(self) -> None:
        self._by_hash: dict[str, Session] = {}
        self._lock = threading.Lock()

    def get(self, request: Any) -> Session:
        key = getattr(request, "session_hash", None) or "anonymous"
        with self._lock:
            session = self._by_hash.get(key)
            if session is None:
                session = self._by_hash[key] = Session(env_base_url(request))
            session.last_seen = time.monotonic()
            return session

    def drop(self, request: Any) -> None:
        key = getattr(request, "session_hash", None) or "anonymous"
        with self._lock:
            session = self._by_hash.pop(key, None)
        if session is not None:
            session.close()

    def __len__(self) -> int:
        return len(self._by_hash)


class busy:
    """Hold a session's lock for one action; a second click while a step runs gets a clear message."""

    def __init__(self, session: Session, what: str = "play"):
        self.session, self.lock = session, session.locks[what]
        self.what = what

    def __enter__(self) -> Session:
        if not self.lock.acquire(blocking=False):
            raise PlayError(f"a {'comparison' if self.what == 'compare' else 'step'} is still running in this "
                            "session: wait for it to finish")
        return self.session

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()


def _is_connection_error(e: Exception) -> bool:
    text = f"{type(e).__name__} {e}".lower()
    return any(w in text for w in ("connection", "closed", "websocket", "not connected", "eof"))


def _one_line(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:400]


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 1)
