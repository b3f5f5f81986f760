"""Generic episodes in the playground's store file (ui.store), in a table of their own.

Same rules as the kernel episodes: per browser id, scrubbed of secrets, the episode id is the
read-only link ``?episode=<id>`` (a generic one opens in the Any env tab), and the same retention.
"""
from __future__ import annotations

import functools
import json
import sqlite3
import threading
import time
from typing import Optional

from environment.trajectory import configured_secrets, scrub
from ui.generic.episode import GenericEpisode
from ui.store import MAX_EPISODES, MAX_RECORD_BYTES, RETENTION_DAYS, StoreError, store, valid_id

SCHEMA = """
CREATE TABLE IF NOT EXISTS generic_episodes (
  episode_id TEXT PRIMARY KEY, browser_id TEXT NOT NULL, env_url TEXT NOT NULL, env_name TEXT NOT NULL,
  player TEXT, model TEXT, seed INTEGER, steps INTEGER, total_reward REAL, done INTEGER,
  updated_at REAL NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS generic_by_browser ON generic_episodes (browser_id, updated_at);
"""


class GenericRuns:
    def __init__(self, path=None):
        path = path or store().path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.executescript(SCHEMA)

    def save(self, browser_id: str, episode: GenericEpisode) -> None:
        if not valid_id(browser_id):
            raise StoreError("this browser has no valid id: reload the page")
        text = json.dumps(scrub(episode.model_dump(mode="json"), configured_secrets()), ensure_ascii=False)
        if len(text.encode()) > MAX_RECORD_BYTES:
            raise StoreError(f"episode {episode.episode_id} is larger than {MAX_RECORD_BYTES // 2**20} MiB and was "
                             "not saved: export it before closing the page")
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.execute(
                    "INSERT INTO generic_episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(episode_id) DO UPDATE "
                    "SET steps=excluded.steps, total_reward=excluded.total_reward, done=excluded.done, "
                    "player=excluded.player, model=excluded.model, updated_at=excluded.updated_at, "
                    "record=excluded.record WHERE generic_episodes.browser_id=excluded.browser_id",
                    (episode.episode_id, browser_id, episode.env_url, episode.env_name, episode.player, episode.model,
                     episode.seed, len(episode.steps), episode.total_reward, int(episode.done), now, text))
                self._db.execute("DELETE FROM generic_episodes WHERE updated_at < ?", (now - RETENTION_DAYS * 86400,))
                self._db.execute(
                    "DELETE FROM generic_episodes WHERE browser_id=? AND episode_id NOT IN (SELECT episode_id FROM "
                    "generic_episodes WHERE browser_id=? ORDER BY updated_at DESC LIMIT ?)",
                    (browser_id, browser_id, MAX_EPISODES))
                self._db.execute("COMMIT")
            except Exception:
                self._db.execute("ROLLBACK")
                raise

    def get(self, episode_id: str) -> Optional[GenericEpisode]:
        if not valid_id(episode_id):
            return None
        with self._lock:
            row = self._db.execute("SELECT record FROM generic_episodes WHERE episode_id=?", (episode_id,)).fetchone()
        return GenericEpisode.model_validate_json(row[0]) if row else None

    def episodes(self, browser_id: str) -> list[GenericEpisode]:
        """This browser's episodes, newest first."""
        with self._lock:
            rows = self._db.execute("SELECT record FROM generic_episodes WHERE browser_id=? ORDER BY updated_at DESC",
                                    (browser_id,)).fetchall()
        return [GenericEpisode.model_validate_json(r[0]) for r in rows]


@functools.lru_cache(maxsize=1)
def runs() -> GenericRuns:
    """The process's generic runs, opened on first use (beside ui.store's episodes)."""
    return GenericRuns()
