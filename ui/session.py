"""Per-browser-session episodes: each session plays its own environments over the WebSocket client.

OpenEnv's web manager shares one environment between all visitors, so the playground instead
opens its own ``KernelEnv`` connection per player slot ("play", "compare-a", "compare-b") of
each browser session, kept in a server-side dict keyed by ``request.session_hash`` (a client
object cannot live in ``gr.State``, which is deep-copied) and closed on ``demo.unload``.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from environment.config import setting
from environment.agent import summarize_action
from environment.driver import EpisodeMemory, unsendable
from environment.client import KernelEnv
from environment.models import KernelAction, KernelObservation
from environment.trajectory import EpisodeRecord, StepRecord, env_version, step_record

ENV_URL_VAR = "KERNEL_PLAYGROUND_ENV_URL"  # overrides where the playground plays (default: this server)
STEP_TIMEOUT_S = 300.0  # a Triton step under the interpreter on a loaded host can take a while
MAX_EPISODES_KEPT = 200  # per session, in memory (the store keeps them across reloads and restarts)
IDLE_CLOSE_S = 2 * 3600.0  # a browser gone this long with nothing running: its environment connections close
log = logging.getLogger("kernel_playground")


class PlayError(Exception):
    """A problem to show in the page as it is (bad input, busy session, lost connection)."""


class EnvironmentLost(PlayError):
    """The environment connection failed, or the server is stopping, before a submission was scored.
    The environment's failure, never the player's: no step is recorded, no turn used, and the next
    submission goes on in a new environment session of the same episode (``EpisodeHandle.resume``)."""


# Set when the server is stopping (SIGTERM: a Space restart): no new submission reaches the environment.
STOPPING = threading.Event()


def env_base_url(request: Any = None) -> str:
    """This server, reached over loopback at the port the request came in on (or $PORT)."""
    override = setting(ENV_URL_VAR)
    if override:
        return override.rstrip("/")
    server = None
    raw = getattr(request, "request", None) if request is not None else None
    scope = getattr(raw, "scope", None)
    if isinstance(scope, dict):
        server = scope.get("server")
    port = server[1] if server and server[1] else int(setting("PORT"))
    return f"http://127.0.0.1:{port}"


def turns_used(record: EpisodeRecord) -> int:
    """Submissions the environment scored: environment errors use no turn (reward None)."""
    return sum(1 for s in record.steps if s.code is not None and s.reward is not None)


def is_over(record: EpisodeRecord) -> bool:
    """No turn left, or the last step ended the episode (finish, or the environment said done)."""
    return bool(record.steps and record.steps[-1].done) or turns_used(record) >= record.max_turns


@dataclass
class EpisodeHandle:
    """One player slot: its environment connection and the episode it is playing."""

    base_url: str
    env: Any = None
    record: Optional[EpisodeRecord] = None
    obs: Optional[KernelObservation] = None     # the latest observation (reset or step)
    memory: Optional[EpisodeMemory] = None      # best code, history, last code/error: the next prompt
    done: bool = True
    turn_offset: int = 0                        # turns used before a resume (the environment session counts from 0)
    lost: bool = False                          # the environment session failed: resume before the next step
    on_change: Optional[Callable[[EpisodeRecord], None]] = None  # persists the record after every change

    def _changed(self) -> None:
        if self.on_change is not None and self.record is not None:
            self.on_change(self.record)

    @property
    def turns_used(self) -> int:
        return turns_used(self.record) if self.record else 0

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

    def _reset_env(self, task_id: str, seed: int, max_turns: int) -> KernelObservation:
        for attempt in (1, 2):  # a connection the server dropped while idle is reopened once
            env = self._connect()
            try:
                return env.reset(task_id=task_id, seed=seed, max_turns=max_turns).observation
            except Exception as e:
                self.close()
                if attempt == 2 or not _is_connection_error(e):
                    raise PlayError(f"reset failed: {_one_line(e)}") from None
        raise AssertionError("unreachable")

    def reset(self, task_id: str, seed: int, max_turns: int, *, player: str, model: Optional[str] = None,
              temperature: Optional[float] = None) -> KernelObservation:
        self.obs = self._reset_env(task_id, seed, max_turns)
        self.turn_offset, self.lost = 0, False
        self.record = EpisodeRecord.start(self.obs, seed=seed, player=player, model=model,
                                          temperature=temperature, env_version=env_version())
        self.memory = EpisodeMemory(self.obs)
        self.done = False
        self._changed()
        return self.obs

    def resume(self, record: EpisodeRecord) -> KernelObservation:
        """Go on with a stored episode whose environment session is gone (the server restarted): a new
        session of the same task and seed for the turns it has left; the record (same id, same steps)
        grows from its last stored step, and the next prompt is the one it would have asked for."""
        self.record = record
        used = self.turns_used
        if is_over(record):
            self.done = True
            raise PlayError(f"this episode is over ({used} of {record.max_turns} turns used): nothing to continue")
        obs = self._reset_env(record.task_id, record.seed or 0, record.max_turns - used)
        self.turn_offset = used  # the new session counts from 0: observations are shifted back to the episode's
        self.obs = obs.model_copy(update={"turn": used, "max_turns": record.max_turns})
        self.memory = EpisodeMemory.replayed(self.obs, record.steps)
        self.done, self.lost = False, False
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
        too_large = unsendable(code)
        if too_large:  # the player's error: no turn used, the episode goes on
            raise PlayError(too_large)
        n = len(self.record.steps) + 1
        if STOPPING.is_set():
            raise EnvironmentLost(f"the server is shutting down (a restart): step {n} was not submitted, nothing "
                                  "was recorded and no turn used")
        if self.lost:  # the last environment session failed: a new one for the turns left, same episode
            self.resume(self.record)
        t0 = time.monotonic()
        try:
            result = self._connect().step(KernelAction(code=code, finish=finish))
        except PlayError:
            raise
        except Exception as e:  # the connection or the server failed: the environment's failure, not a score
            self.close()
            self.lost = True
            why = "the server is shutting down (a restart)" if STOPPING.is_set() else \
                f"the connection to the environment was lost ({_one_line(e)})"
            raise EnvironmentLost(f"{why} before step {n} was scored: nothing was recorded and no turn used") from None
        obs = result.observation
        if self.turn_offset:  # a resumed episode: turns as the episode counts them
            obs = obs.model_copy(update={"turn": obs.turn + self.turn_offset,
                                         "max_turns": obs.max_turns + self.turn_offset})
        step = step_record(n, code, obs, action_summary=summarize_action(code), done=result.done,
                           reward=result.reward, latency_ms=latency_ms, env_latency_ms=_ms(t0),
                           prompt_messages=prompt_messages or [], raw_reply=raw_reply)
        self.record.add_step(step)
        self.obs, self.done = obs, bool(result.done) or self.turns_used >= self.record.max_turns
        if step.reward is None:  # the environment's failure: no score, no turn
            self.memory.environment_failed(code, step.error or obs.error)
        else:
            self.memory.scored(code, obs)
        self._changed()
        return step

    def player_failed(self, error: str) -> None:
        """The player produced nothing to submit (no reply, an HTTP error, prose): no step, no turn;
        the next prompt tells a model what went wrong."""
        self._check_running()
        self.memory.player_failed(error)

    def model_messages(self) -> list[dict[str, str]]:
        self._check_running()
        return self.memory.messages()


class Session:
    """Everything one browser owns (all its tabs, across reloads): its player slots, the model job
    running for it, and every episode it played (in memory and in the store)."""

    def __init__(self, base_url: str, browser_id: Optional[str] = None):
        self.base_url = base_url
        self.browser_id = browser_id
        self.slots: dict[str, EpisodeHandle] = {}
        self.episodes: list[EpisodeRecord] = []
        self.locks = {"play": threading.Lock(), "compare": threading.Lock()}
        self.job: Any = None  # ui.autoplay.ModelJob while a model plays for this browser
        self.replay: list[EpisodeRecord] = []
        self.last_seen = time.monotonic()
        self.save_error: Optional[str] = None
        self.interrupted: Optional[str] = None  # the episode of an auto-play a restart cut off, shown in Play
        self.drafts: dict[str, str] = {}  # task id -> the code last edited for it (Play's editor)

    def slot(self, name: str) -> EpisodeHandle:
        if name not in self.slots:
            self.slots[name] = EpisodeHandle(self.base_url, on_change=self.save)
        return self.slots[name]

    def save(self, record: EpisodeRecord) -> None:
        """Persist ``record`` for this browser; a failure is logged and shown, never raised into play."""
        if not self.browser_id:
            return
        from ui.store import store
        try:
            store().save(self.browser_id, record)
            self.save_error = None
        except Exception as e:  # a full disk must not stop the game: the page says the episode is unsaved
            log.warning("could not store episode %s: %s", record.episode_id, _one_line(e))
            self.save_error = f"episode not saved on the server ({_one_line(e)}): export it before leaving"

    def started(self, record: EpisodeRecord) -> None:
        self.episodes.append(record)
        del self.episodes[:-MAX_EPISODES_KEPT]

    def exportable(self) -> list[EpisodeRecord]:
        """Every stored episode of this browser, plus any played here that the store could not keep."""
        stored: list[EpisodeRecord] = []
        if self.browser_id:
            from ui.store import store
            stored = store().records(self.browser_id)
        ids = {r.episode_id for r in stored}
        return stored + [r for r in self.episodes if r.steps and r.episode_id not in ids]

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.finished

    def close(self) -> None:
        for handle in self.slots.values():
            handle.close()


class Sessions:
    """Sessions by browser id; a page load binds its Gradio session hash to its browser's id, so a
    reload (a new hash) finds the same session, its episode and its running model job."""

    def __init__(self) -> None:
        self._by_key: dict[str, Session] = {}
        self._browser_of: dict[str, str] = {}
        self._lock = threading.Lock()

    def bind(self, request: Any, browser_id: str) -> Session:
        hash_ = getattr(request, "session_hash", None) or "anonymous"
        with self._lock:
            self._browser_of[hash_] = browser_id
        return self.get(request)

    def get(self, request: Any) -> Session:
        hash_ = getattr(request, "session_hash", None) or "anonymous"
        with self._lock:
            browser = self._browser_of.get(hash_)
            key = f"b:{browser}" if browser else f"h:{hash_}"
            session = self._by_key.get(key)
            if session is None:
                session = self._by_key[key] = Session(env_base_url(request), browser)
            session.last_seen = time.monotonic()
            self._close_idle(session)
            return session

    def _close_idle(self, keep: Session) -> None:
        now = time.monotonic()
        for key, s in list(self._by_key.items()):
            if s is not keep and not s.running and now - s.last_seen > IDLE_CLOSE_S:
                del self._by_key[key]
                s.close()

    def drop(self, request: Any) -> None:
        """The page closed: forget its hash; the browser's session (and any model job) lives on."""
        hash_ = getattr(request, "session_hash", None) or "anonymous"
        with self._lock:
            browser = self._browser_of.pop(hash_, None)
            session = self._by_key.get(f"h:{hash_}") if browser is None else None
            if session is not None and not session.running:
                del self._by_key[f"h:{hash_}"]
        if session is not None and not session.running:
            session.close()

    def __len__(self) -> int:
        return len(self._by_key)

    def all(self) -> list[Session]:
        with self._lock:
            return list(self._by_key.values())


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
