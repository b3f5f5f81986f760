"""Episodes kept on the server, per browser, in an embedded SQLite file: nothing is lost on reload.

Each browser holds a random id (``gr.BrowserState``, localStorage); every episode it plays (by
hand or by a model) is written here after each step, scrubbed of tokens like every export. The
episode id (128 random bits) is also the read-only link ``?episode=<id>``: whoever has it can
view that one episode, nothing else.

Where: ``$KERNEL_PLAYGROUND_DATA_DIR`` (default ``$XDG_DATA_HOME/kernel_playground`` or
``~/.local/share/kernel_playground``; the temp dir when that is not writable, as in a read-only
image). Retention: at most ``KERNEL_PLAYGROUND_MAX_EPISODES`` (200) episodes per browser and
``KERNEL_PLAYGROUND_RETENTION_DAYS`` (30) days since an episode last changed; a record larger than
8 MiB is refused with a message (the page still shows it).
"""
from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from environment.config import setting
from environment.trajectory import EpisodeRecord, export_rows

DATA_DIR_VAR = "KERNEL_PLAYGROUND_DATA_DIR"
MAX_EPISODES = int(setting("KERNEL_PLAYGROUND_MAX_EPISODES"))
RETENTION_DAYS = float(setting("KERNEL_PLAYGROUND_RETENTION_DAYS"))
MAX_RECORD_BYTES = 8 * 2**20
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
  episode_id TEXT PRIMARY KEY, browser_id TEXT NOT NULL, task_id TEXT NOT NULL, seed INTEGER,
  player TEXT, model TEXT, score REAL, steps INTEGER, hacks INTEGER, max_turns INTEGER,
  created_at TEXT, updated_at REAL NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS episodes_by_browser ON episodes (browser_id, updated_at);
CREATE TABLE IF NOT EXISTS autoplay (
  episode_id TEXT PRIMARY KEY, browser_id TEXT NOT NULL, boot TEXT NOT NULL, settings TEXT NOT NULL,
  started_at REAL NOT NULL);
"""
# This server process. A model auto-play marked running by another process (``autoplay``) was cut off
# by a restart: its thread died with that process, and its token (never stored) with it.
BOOT = secrets.token_hex(8)
AUTOPLAY_SETTINGS = {"model", "base_url", "temperature", "max_tokens"}


class StoreError(Exception):
    """A problem to show as it is (record too large, unknown episode)."""


def data_dir() -> Path:
    configured = setting(DATA_DIR_VAR)
    if configured:
        return Path(configured)
    base = setting("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    candidate = Path(base) / "kernel_playground"
    try:
        candidate.mkdir(parents=True, exist_ok=True)
        if os.access(candidate, os.W_OK):
            return candidate
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / "kernel_playground"


def valid_id(value: Optional[str]) -> bool:
    return bool(value) and bool(_ID.match(value))


@dataclass(frozen=True)
class StoredEpisode:
    """One row of the runs list (the record itself is read only when opened)."""
    episode_id: str
    task_id: str
    seed: Optional[int]
    player: str
    model: Optional[str]
    score: float
    steps: int
    hacks: int
    max_turns: int
    created_at: str
    updated_at: float


class EpisodeStore:
    def __init__(self, path: Optional[Path] = None):
        self.path = Path(path) if path else data_dir() / "episodes.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: safe against a crash of the app; one fsync per checkpoint
        self._db.executescript(SCHEMA)
        os.chmod(self.path, 0o600)

    def save(self, browser_id: str, record: EpisodeRecord) -> None:
        """Insert or update ``record`` for ``browser_id``, scrubbed of secrets; then apply retention."""
        if not valid_id(browser_id):
            raise StoreError("this browser has no valid id: reload the page")
        row = export_rows([record])[0]
        text = json.dumps(row, ensure_ascii=False)
        if len(text.encode()) > MAX_RECORD_BYTES:
            raise StoreError(f"episode {record.episode_id} is larger than {MAX_RECORD_BYTES // 2**20} MiB and "
                             "was not saved: export it from this page before closing it")
        hacks = sum(1 for s in record.steps if any(_is_hack(f) for f in (s.observation or {}).get("flags") or []))
        now = time.time()
        with self._lock, self._db:  # one transaction: the row and the retention together
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(episode_id) DO UPDATE SET "
                "task_id=excluded.task_id, seed=excluded.seed, player=excluded.player, model=excluded.model, "
                "score=excluded.score, steps=excluded.steps, hacks=excluded.hacks, max_turns=excluded.max_turns, "
                "updated_at=excluded.updated_at, record=excluded.record WHERE episodes.browser_id=excluded.browser_id",
                (record.episode_id, browser_id, record.task_id, record.seed, record.player, record.model,
                 record.score, len(record.steps), hacks, record.max_turns, row["created_at"], now, text))
            self._prune(browser_id, now)

    def _prune(self, browser_id: str, now: float) -> None:
        self._db.execute("DELETE FROM episodes WHERE updated_at < ?", (now - RETENTION_DAYS * 86400,))
        self._db.execute(
            "DELETE FROM episodes WHERE browser_id=? AND episode_id NOT IN (SELECT episode_id FROM episodes "
            "WHERE browser_id=? ORDER BY updated_at DESC LIMIT ?)", (browser_id, browser_id, MAX_EPISODES))

    def runs(self, browser_id: str) -> list[StoredEpisode]:
        """This browser's episodes, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT episode_id, task_id, seed, player, model, score, steps, hacks, max_turns, created_at, "
                "updated_at FROM episodes WHERE browser_id=? ORDER BY updated_at DESC", (browser_id,)).fetchall()
        return [StoredEpisode(*r) for r in rows]

    def get(self, episode_id: str) -> EpisodeRecord:
        if not valid_id(episode_id):
            raise StoreError(f"{episode_id!r} is not an episode id")
        with self._lock:
            row = self._db.execute("SELECT record FROM episodes WHERE episode_id=?", (episode_id,)).fetchone()
        if row is None:
            raise StoreError(f"no stored episode {episode_id}: it was never saved here or has expired "
                             f"(episodes are kept {RETENTION_DAYS:g} days)")
        return EpisodeRecord.model_validate_json(row[0])

    def records(self, browser_id: str) -> list[EpisodeRecord]:
        """Every stored episode of this browser with at least one step, oldest first (for the export)."""
        with self._lock:
            rows = self._db.execute("SELECT record FROM episodes WHERE browser_id=? AND steps > 0 "
                                    "ORDER BY created_at, updated_at", (browser_id,)).fetchall()
        return [EpisodeRecord.model_validate_json(r[0]) for r in rows]

    def task_records(self, task_id: str, seed: Optional[int] = None, limit: int = 500) -> list[EpisodeRecord]:
        """The newest stored episodes of a task (every browser), for the leaderboard."""
        query, args = "SELECT record FROM episodes WHERE task_id=? AND steps > 0", [task_id]
        if seed is not None:
            query, args = query + " AND seed=?", args + [seed]
        with self._lock:
            rows = self._db.execute(query + " ORDER BY updated_at DESC LIMIT ?", (*args, limit)).fetchall()
        return [EpisodeRecord.model_validate_json(r[0]) for r in rows]


    # -- model auto-play across restarts: its settings, never its token ----------------------------
    def autoplay_started(self, browser_id: str, episode_id: str, settings: dict) -> None:
        """A model auto-plays ``episode_id`` in this process (``settings``: model, base URL, temperature,
        max tokens; a token is refused)."""
        if not set(settings) <= AUTOPLAY_SETTINGS:  # never a token, whatever a caller passes
            raise StoreError(f"auto-play settings are {sorted(AUTOPLAY_SETTINGS)}, got {sorted(settings)}")
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO autoplay VALUES (?,?,?,?,?)",
                             (episode_id, browser_id, BOOT, json.dumps(settings), time.time()))

    def autoplay_ended(self, episode_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM autoplay WHERE episode_id=?", (episode_id,))

    def interrupted(self, browser_id: str) -> dict[str, dict]:
        """This browser's auto-plays that a server restart cut off, newest first: episode id -> settings."""
        with self._lock:
            self._db.execute("DELETE FROM autoplay WHERE episode_id NOT IN (SELECT episode_id FROM episodes)")
            rows = self._db.execute("SELECT episode_id, settings FROM autoplay WHERE browser_id=? AND boot<>? "
                                    "ORDER BY started_at DESC", (browser_id, BOOT)).fetchall()
        return {episode_id: json.loads(settings) for episode_id, settings in rows}


def _is_hack(flag: str) -> bool:
    from environment.evaluation import flags as F
    return F.is_hack(flag)


_STORE: Optional[EpisodeStore] = None
_STORE_LOCK = threading.Lock()


def store() -> EpisodeStore:
    """The process's store, opened on first use."""
    global _STORE
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = EpisodeStore()
        return _STORE
