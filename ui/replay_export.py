"""Export a session's episodes (JSONL, Parquet, Hub dataset) and load an exported file for replay.

The writers and the reader are environment/trajectory.py's, shared with inference.py: one record
per episode with its steps and the TRL ``messages``/``prompt`` columns, scrubbed of tokens.
"""
from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path
from typing import Optional, Sequence

from environment.trajectory import EpisodeRecord, push_to_hub, read_episodes, write_jsonl, write_parquet
from ui.session import PlayError
from ui.verdict import num

EXPORT_ROOT = Path(tempfile.gettempdir()) / "kernel_playground_exports"  # Gradio serves files from the temp dir
MAX_REPLAY_BYTES = 64 * 2**20


def export_files(records: Sequence[EpisodeRecord], secrets: Sequence[Optional[str]] = ()) -> tuple[Path, Path]:
    """Write the episodes as JSONL and Parquet into a fresh private folder; returns both paths."""
    if not records:
        raise PlayError("no episodes to export yet: play at least one step first")
    folder = EXPORT_ROOT / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    jsonl = write_jsonl(records, folder / f"kernel_env_episodes_{stamp}.jsonl", secrets=secrets)
    parquet = write_parquet(records, folder / f"kernel_env_episodes_{stamp}.parquet", secrets=secrets)
    return jsonl, parquet


def load_replay(path: Optional[str]) -> list[EpisodeRecord]:
    """Episodes of an uploaded file, or a PlayError that says why the file cannot be replayed."""
    if not path:
        raise PlayError("choose an exported .jsonl or .parquet file to replay")
    p = Path(path)
    if p.suffix.lower() not in (".jsonl", ".json", ".parquet"):
        raise PlayError(f"{p.name} is not an episode export: expected a .jsonl or .parquet file")
    if p.stat().st_size > MAX_REPLAY_BYTES:
        raise PlayError(f"{p.name} is larger than {MAX_REPLAY_BYTES // 2**20} MiB")
    try:
        records = read_episodes(p)
    except (ValueError, FileNotFoundError, UnicodeDecodeError) as e:
        raise PlayError(f"cannot replay {p.name}: {' '.join(str(e).replace(str(p), p.name).split())[:400]}") from None
    if not records:
        raise PlayError(f"{p.name} holds no episodes")
    return records


def episode_label(i: int, record: EpisodeRecord) -> str:
    who = f"model {record.model}" if record.model else record.player
    return f"{i + 1}. {record.task_id} · seed {record.seed} · {who} · best {num(record.score)} · {len(record.steps)} steps"


def push(records: Sequence[EpisodeRecord], repo_id: Optional[str], token: Optional[str], private: bool) -> str:
    repo_id = (repo_id or "").strip()
    if not repo_id or "/" not in repo_id:
        raise PlayError("the dataset repo id must look like owner/name")
    if not token:
        raise PlayError("type a Hugging Face token with write access to push (the Space's own token is never "
                        "used for pushes)")
    if not records:
        raise PlayError("no episodes to push yet: play at least one step first")
    try:
        return push_to_hub(list(records), repo_id, token, private=private)
    except (RuntimeError, ValueError) as e:  # push_to_hub's messages carry no token
        raise PlayError(str(e)[:500]) from None
