"""A model playing on the server, independent of the page: it goes on when the tab closes, and a
page that comes back (same browser) follows its progress.

One job per browser session at a time. A job lives in the server process: while one auto-plays to
the end, the store marks its episode (settings only, never the token), so after a restart the
page shows that episode as interrupted and continues it with the token entered again.

Stop takes effect at once while the model is thinking
(its pending reply is abandoned and never played: no step, no turn); a submission the
environment is already evaluating finishes and is recorded, and the page says so. Replies
without code are the player's errors: they use no turn, and after ``MAX_PLAYER_ERRORS`` in a row
the job gives up (a model that never answers with code cannot hold the episode open forever).

When the environment connection is lost or the server is stopping (SIGTERM: a Space restart), the
job ends *interrupted*: the submission that did not run is not recorded (no step, no score, no turn),
the auto-play mark stays in the store, and Continue auto-play goes on from the last stored step, in
this process or the next.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from environment.driver import PLAYER_RETRIES
from environment.trajectory import EpisodeRecord
from ui.players import ModelSettings, PlayerFailure, Reply, ask_model, play_reply
from ui.session import STOPPING, EnvironmentLost, EpisodeHandle, PlayError, Session, Sessions, is_over
from ui.verdict import num, verdict_of

log = logging.getLogger("kernel_playground")
MAX_PLAYER_ERRORS = PLAYER_RETRIES + 1  # environment.driver's rule, as in inference.py


class ModelJob:
    def __init__(self, session: Session, handle: EpisodeHandle, settings: ModelSettings, token: Optional[str],
                 max_steps: Optional[int] = None, max_player_errors: int = MAX_PLAYER_ERRORS):
        self.session, self.handle, self.settings = session, handle, settings
        self._token = token  # held in memory only while the job runs; never stored or shown
        self.max_steps, self.max_player_errors = max_steps, max_player_errors
        self.stop = threading.Event()
        self.changed = threading.Condition()
        self.version = 0          # bumped on every change the page should show
        self.finished = False
        self.message = f"{settings.model} is writing step {len(handle.record.steps) + 1}…"
        self.kind = "busy"
        self.last_failure: Optional[PlayerFailure] = None
        self.discarded = False    # Stop dropped a pending model reply
        self.cut = threading.Event()  # the server is stopping: end interrupted, keep the auto-play mark
        self.interrupted: Optional[str] = None  # why the job ended interrupted (Continue offered)
        self._thread = threading.Thread(target=self._run, name="kp-model-job", daemon=True)

    def start(self) -> "ModelJob":
        lock = self.session.locks["play"]
        if not lock.acquire(blocking=False):
            raise PlayError("a step is still running for this browser: wait for it, or press Stop")
        self._lock = lock
        self.session.job = self
        self._mark(running=True)
        self._thread.start()
        return self

    def _mark(self, running: bool) -> None:
        """Auto-play (to the end) is marked in the store while it runs, with its settings and never its
        token: a server restart kills the job, and the next process shows the episode as interrupted
        and offers to continue it (ui.play_tab)."""
        browser, episode = self.session.browser_id, self.handle.record.episode_id
        if self.max_steps is not None or not browser:
            return
        from ui.store import store
        try:
            if running:
                store().autoplay_started(browser, episode, self.settings_dict)
            else:
                store().autoplay_ended(episode)
        except Exception as e:  # the store's trouble must not stop the game (session.save reports it)
            log.warning("could not mark auto-play of %s: %s", episode, e)

    def request_stop(self) -> None:
        self.stop.set()
        if not self.finished:
            self._notify("Stopping: a pending model reply is discarded; a step already being evaluated is "
                         "recorded.", "busy")

    def wait_change(self, seen: int, timeout_s: float = 30.0) -> int:
        """Block until the job changed after version ``seen`` (or finished, or the timeout)."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen or self.finished, timeout=timeout_s)
            return self.version

    def _notify(self, message: Optional[str] = None, kind: Optional[str] = None) -> None:
        with self.changed:
            if message is not None:
                self.message = message
            if kind is not None:
                self.kind = kind
            self.version += 1
            self.changed.notify_all()

    def _wait_for_reply(self, call: Callable[[], Reply]) -> Optional[Reply]:
        """Run the model call in its own thread; None when Stop came first (the reply is dropped)."""
        box: list[Reply] = []
        done = threading.Event()

        def target() -> None:
            try:
                box.append(call())
            finally:
                done.set()
                self._notify()

        threading.Thread(target=target, name="kp-model-call", daemon=True).start()
        with self.changed:
            self.changed.wait_for(lambda: done.is_set() or self.stop.is_set() or self.cut.is_set())
        return box[0] if box else None

    def server_stopping(self) -> None:
        """The server got SIGTERM: a pending model reply is abandoned and nothing more is submitted."""
        self.cut.set()
        self._notify()

    @property
    def settings_dict(self) -> dict:
        s = self.settings
        return {"model": s.model, "base_url": s.base_url, "temperature": s.temperature, "max_tokens": s.max_tokens}

    def _run(self) -> None:
        h, model = self.handle, self.settings.model
        played, errors_in_a_row = 0, 0
        n = len(h.record.steps) + 1
        try:
            while not h.done and not self.stop.is_set():
                if self.max_steps is not None and played >= self.max_steps:
                    break
                n = len(h.record.steps) + 1
                if self.cut.is_set() or STOPPING.is_set():
                    raise EnvironmentLost(SHUTTING_DOWN)
                self._notify(f"{model} is writing step {n}…", "busy")
                reply, messages = ask_model(h, self.settings, self._token, self._wait_for_reply)
                if self.cut.is_set() or STOPPING.is_set():  # a reply that came during shutdown is not played
                    raise EnvironmentLost(SHUTTING_DOWN)
                if reply is None:  # stopped while the model was thinking
                    self.discarded = True
                    break
                self._notify(f"Step {n}: evaluating {model}'s code…", "busy")
                turn = play_reply(h, reply, messages)
                if isinstance(turn, PlayerFailure):
                    self.last_failure = turn
                    errors_in_a_row += 1
                    self._notify(f"{model} gave no usable code — {turn.error} (no turn used)", "error")
                    if errors_in_a_row >= self.max_player_errors or self.max_steps is not None:
                        break
                    continue
                played, errors_in_a_row = played + 1, 0
                self.last_failure = None
                v = verdict_of(turn)
                self._notify(f"Step {turn.step}: {model}: {v.title}", v.style)
            self._finish(played, errors_in_a_row)
        except EnvironmentLost as e:
            self._interrupt(n, str(e))
        except PlayError as e:
            self._end(str(e), "error")
        except Exception as e:  # never a silent death: the page shows it
            log.exception("model job failed")
            self._end(f"auto-play failed ({type(e).__name__}); the episode so far is saved", "error")

    def _finish(self, played: int, errors_in_a_row: int) -> None:
        h = self.handle
        if self.stop.is_set() and self.discarded:
            end = "stopped: the model's pending reply was discarded, no turn used"
        elif self.stop.is_set():
            end = "stopped (the step being evaluated when you pressed Stop is recorded above)"
        elif errors_in_a_row >= self.max_player_errors:
            end = f"stopped after {errors_in_a_row} replies without code in a row (none used a turn)"
        elif h.done:
            end = f"episode over, best score {num(h.record.score)}"
        else:
            end = None
        message, kind = self.message, self.kind
        if self.stop.is_set():  # the last message was "Stopping…": say how it ended instead
            last = h.record.steps[-1] if self.discarded is False and played and h.record.steps else None
            message = f"Step {last.step}: {verdict_of(last).title}" if last is not None else "Auto-play"
            kind = "info"
        if end:
            message, kind = f"{message} — {end}.", (kind if kind != "busy" else "info")
        self._end(message, kind)

    def _interrupt(self, n: int, why: str) -> None:
        """The environment's failure, not the model's: the job ends with the episode as stored (the mark
        of an auto-play stays, so a restarted server offers Continue too) and the page offers Continue."""
        self.interrupted = why
        self.session.interrupted = self.handle.record.episode_id
        log.warning("auto-play of %s interrupted at step %d: %s", self.handle.record.episode_id, n, why)
        self._end(f"Auto-play {INTERRUPTED_HERE}: {why}. Press Continue auto-play to go on from step {n} "
                  "(enter your token again; tokens are never stored).", "warn", keep_mark=True)

    def _end(self, message: str, kind: str, keep_mark: bool = False) -> None:
        self._token = None
        if not keep_mark:
            self._mark(running=False)
        self.finished = True
        try:
            self._lock.release()
        except RuntimeError:
            pass
        self._notify(message, kind)


INTERRUPTED = "interrupted by a server restart"
INTERRUPTED_HERE = "interrupted"
SHUTTING_DOWN = "the server is shutting down (a restart): the step in progress was not submitted"


def server_stopping(sessions: Sessions) -> None:
    """SIGTERM: every running model job ends interrupted (nothing half-done is recorded) and no new
    submission reaches the environment; the page is told at once."""
    STOPPING.set()
    for session in sessions.all():
        if session.running:
            session.job.server_stopping()


def interrupted_autoplay(session: Session) -> Optional[tuple[EpisodeRecord, dict]]:
    """The newest auto-play of this browser that a server restart cut off and that has turns left:
    (its stored record, its model settings); None when there is none."""
    from ui.store import StoreError, store

    if not session.browser_id:
        return None
    for episode_id, settings in store().interrupted(session.browser_id).items():
        try:
            record = store().get(episode_id)
        except StoreError:
            continue
        if is_over(record):
            store().autoplay_ended(episode_id)  # it had ended; only the mark outlived it
            continue
        return record, settings
    return None
