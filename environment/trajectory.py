"""Episode records and their writers, shared by the playground and inference.py.

One ``EpisodeRecord`` per episode: the steps as played (code, observation, reward, error, model
prompt and raw reply) plus two TRL views built from them: ``messages`` (conversational, for SFT)
and ``prompt`` (prompt-only, for GRPO). Records go to JSONL or Parquet, both readable with
``datasets.load_dataset("json" | "parquet", data_files=...)``, and to a Hub dataset.

Every writer scrubs secrets first: any ``hf_...`` token-looking string and the configured token
values (``HF_TOKEN``, ``API_KEY`` and any passed in) are replaced in every string field.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from environment.agent import SYSTEM_PROMPT, build_messages, feedback_message, field_of
from environment.audit import Label, check_label

REDACTED = "[REDACTED]"
SECRET_ENV_VARS = ("HF_TOKEN", "API_KEY", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY")
# Hugging Face tokens are "hf_" + 34 letters/digits; 20+ keeps identifiers like hf_hub_download intact.
_HF_TOKEN = re.compile(r"hf_[A-Za-z0-9]{20,}")
_MIN_SECRET_LEN = 8  # shorter configured values would redact ordinary words
# Heavy or per-episode observation fields kept out of each step's observation dict.
_OBSERVATION_EXCLUDE = {"prompt", "reference_code", "evaluation", "metadata"}


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str
    content: str


class StepRecord(BaseModel):
    """One submission (or one failed attempt to get a submission from the player)."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(description="1-based step number within the episode.")
    code: Optional[str] = Field(None, description="Source submitted; null when the player produced none.")
    action_summary: str = Field("none", description="Short single-line summary of the code (hash, size).")
    observation: Optional[dict[str, Any]] = Field(
        None, description="KernelObservation fields after the step (without prompt, reference_code, "
        "evaluation); null when nothing reached the environment.")
    evaluation_json: Optional[str] = Field(None, description="The full EvalResult record as JSON.")
    reward: Optional[float] = Field(0.0, description="The step's reward; null when the environment failed "
                                                     "(outcome harness_error): such a step is no sample to learn from.")
    done: bool = False
    error: Optional[str] = Field(None, description="The step's error (environment or player), else null.")
    latency_ms: float = Field(0.0, description="Time the player (model call or person) took.")
    env_latency_ms: float = Field(0.0, description="Time the environment step took.")
    prompt_messages: list[Message] = Field(default_factory=list, description="Messages sent to the model.")
    raw_reply: Optional[str] = Field(None, description="The model's reply as received; null for people.")


class EpisodeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    task_id: str
    difficulty: str = ""
    seed: Optional[int] = None
    player: str = Field("model", description="model, human or scripted.")
    model: Optional[str] = Field(None, description="Model id for model players.")
    temperature: Optional[float] = None
    max_turns: int = 1
    steps: list[StepRecord] = Field(default_factory=list)
    rewards: list[Optional[float]] = Field(default_factory=list, description="Per step, null for environment errors.")
    score: float = Field(0.0, description="Best reward of the episode, in [0, 1].")
    success: bool = Field(False, description="Some step was correct with a positive score.")
    env_version: str = "unknown"
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc).replace(microsecond=0))
    prompt: list[Message] = Field(default_factory=list, description="TRL prompt-only view: system + task.")
    messages: list[Message] = Field(default_factory=list, description="TRL conversational view.")
    labels: list[Label] = Field(default_factory=list, description="People's audit labels of steps (environment/audit.py).")

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        # Arrow's JSON reader turns the ISO string into a naive UTC timestamp.
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)

    @classmethod
    def start(cls, observation: Any, **fields: Any) -> "EpisodeRecord":
        """A record for an episode that ``reset`` just returned ``observation`` for."""
        record = cls(
            task_id=field_of(observation, "task_id", ""),
            difficulty=field_of(observation, "difficulty", ""),
            max_turns=field_of(observation, "max_turns", 1),
            prompt=[Message(**m) for m in build_messages(observation)],
            **fields,
        )
        record.refresh()
        return record

    def add_label(self, step: int, label: str, note: str = "") -> Label:
        """Label one of this episode's steps (a later label of the same step replaces it)."""
        check_label(label, note)
        if not 1 <= step <= len(self.steps):
            raise ValueError(f"step {step} is not in this episode (it has {len(self.steps)} step(s))")
        made = Label(step=step, label=label, note=note or "",
                     at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self.labels = [x for x in self.labels if x.step != step] + [made]
        return made

    def add_step(self, step: StepRecord) -> None:
        self.steps.append(step)
        self.refresh()

    def refresh(self) -> None:
        """Recompute rewards, score, success and the TRL messages from the steps."""
        self.rewards = [s.reward for s in self.steps]
        self.score = max([0.0] + [r for r in self.rewards if r is not None])
        self.success = any(
            (s.observation or {}).get("correct") is True and (s.reward or 0.0) > 0 for s in self.steps)
        self.messages = _conversation(self.prompt, self.steps)


def _conversation(prompt: Sequence[Message], steps: Sequence[StepRecord]) -> list[Message]:
    """System and task, then per submission the assistant's reply and the environment's feedback.

    Attempts that produced no code are left out (they carry no behaviour to learn from), and so is
    the feedback after the final submission: a conversation for SFT ends on the assistant turn (that
    feedback is in the last step's ``observation``).
    """
    turns = [s for s in steps if s.code is not None]
    messages = list(prompt) if prompt else [Message(role="system", content=SYSTEM_PROMPT)]
    for i, step in enumerate(turns):
        content = step.raw_reply if step.raw_reply else "```python\n" + step.code.rstrip("\n") + "\n```"
        messages.append(Message(role="assistant", content=content))
        if i + 1 < len(turns):
            feedback = feedback_message(step.observation) if step.observation else f"Error: {step.error}"
            messages.append(Message(role="user", content=feedback))
    return messages


def step_record(
    step: int,
    code: Optional[str],
    observation: Any = None,
    *,
    action_summary: str = "none",
    reward: Optional[float] = None,
    done: bool = False,
    error: Optional[str] = None,
    **fields: Any,
) -> StepRecord:
    """A StepRecord from a KernelObservation (or None when the step never reached the environment)."""
    obs_dict = None
    evaluation_json = None
    if observation is not None:
        obs_dict = observation.model_dump(mode="json", exclude=_OBSERVATION_EXCLUDE)
        if observation.evaluation is not None:
            evaluation_json = observation.evaluation.model_dump_json()
        harness_error = getattr(observation, "outcome", None) == "harness_error"
        if reward is None and not harness_error:
            reward = observation.reward if observation.reward is not None else observation.score
        error = error or observation.error
    # No reward (null, never 0.0) for the environment's failures: a harness error, or a submission that
    # never reached the environment (the connection or the server failed); a player's error (no code) is 0.0.
    unscored = reward is None and (getattr(observation, "outcome", None) == "harness_error"
                                   or (observation is None and code is not None))
    return StepRecord(step=step, code=code, action_summary=action_summary, observation=obs_dict,
                      evaluation_json=evaluation_json, reward=None if unscored else float(reward or 0.0), done=done,
                      error=error, **fields)


def env_version() -> str:
    try:
        from importlib.metadata import version
        return version("kernel-playground")
    except Exception:  # not installed as a distribution (running from a checkout)
        return "dev"


# ---- secrets -------------------------------------------------------------------------------

def configured_secrets(extra: Iterable[Optional[str]] = ()) -> list[str]:
    values = [os.environ.get(name) for name in SECRET_ENV_VARS] + list(extra)
    return sorted({v for v in values if v and len(v) >= _MIN_SECRET_LEN}, key=len, reverse=True)


def scrub(value: Any, secrets: Sequence[str] = ()) -> Any:
    """``value`` with every token-looking string and every value of ``secrets`` redacted, recursively."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return _HF_TOKEN.sub(REDACTED, value)
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    return value


def export_rows(records: Iterable[EpisodeRecord], secrets: Iterable[Optional[str]] = ()) -> list[dict[str, Any]]:
    """Plain, scrubbed dicts, one per episode, with a fixed set of keys (stable Arrow schema)."""
    found = configured_secrets(secrets)
    return [scrub(r.model_dump(mode="json"), found) for r in records]


# ---- writers and reader --------------------------------------------------------------------

def write_jsonl(records: Iterable[EpisodeRecord], path: str | os.PathLike, *,
                secrets: Iterable[Optional[str]] = ()) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in export_rows(records, secrets):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def write_parquet(records: Iterable[EpisodeRecord], path: str | os.PathLike, *,
                  secrets: Iterable[Optional[str]] = ()) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = export_rows(records, secrets)
    if not rows:
        raise ValueError("no episodes to write: Parquet needs at least one record to know its schema")
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_episodes(records: Iterable[EpisodeRecord], path: str | os.PathLike, *,
                   secrets: Iterable[Optional[str]] = ()) -> Path:
    """JSONL or Parquet, chosen by the file suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return write_parquet(records, path, secrets=secrets)
    if suffix in (".jsonl", ".json"):
        return write_jsonl(records, path, secrets=secrets)
    raise ValueError(f"cannot tell the format of {path}: name it *.jsonl or *.parquet")


def _from_row(row: dict[str, Any], where: str) -> EpisodeRecord:
    # Arrow merges struct fields across rows: keys another row had come back as None.
    for step in row.get("steps") or []:
        obs = step.get("observation")
        if obs and isinstance(obs.get("reward_breakdown"), dict):
            obs["reward_breakdown"] = {k: v for k, v in obs["reward_breakdown"].items() if v is not None}
    try:
        return EpisodeRecord.model_validate(row)
    except ValidationError as e:
        raise ValueError(f"{where} is not an episode record: {e}") from None


def read_episodes(path: str | os.PathLike) -> list[EpisodeRecord]:
    """Episodes from a file written by write_jsonl or write_parquet."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no episode file at {path}")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as e:
            raise ValueError(f"{path} is not a readable Parquet file: {e}") from None
        return [_from_row(row, f"{path} row {i}") for i, row in enumerate(rows)]
    if suffix in (".jsonl", ".json"):
        records = []
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path} line {n} is not JSON: {e.msg}") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path} line {n} is not a JSON object")
                records.append(_from_row(row, f"{path} line {n}"))
        return records
    raise ValueError(f"cannot tell the format of {path}: expected a .jsonl or .parquet file")


def push_to_hub(records: Sequence[EpisodeRecord], repo_id: str, token: Optional[str], private: bool = True,
                *, path_in_repo: Optional[str] = None) -> str:
    """Upload the episodes as one new Parquet file of a Hub dataset (created if missing); returns its URL.

    Each push adds a file under ``data/``, so earlier episodes stay. Errors never carry the token.
    """
    from huggingface_hub import HfApi

    if not repo_id or "/" not in repo_id:
        raise ValueError(f"repo_id must look like 'owner/name', got {repo_id!r}")
    if not records:
        raise ValueError("no episodes to push")
    secrets = configured_secrets([token])
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path_in_repo = path_in_repo or f"data/episodes-{stamp}-{uuid.uuid4().hex[:8]}.parquet"
    api = HfApi(token=token)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            local = write_parquet(records, Path(tmp) / "episodes.parquet", secrets=secrets)
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            info = api.upload_file(path_or_fileobj=str(local), path_in_repo=path_in_repo, repo_id=repo_id,
                                   repo_type="dataset", commit_message=f"Add {len(records)} kernel_env episodes")
    except Exception as e:  # huggingface_hub raises many types; report one clean, token-free error
        raise RuntimeError(f"push to {repo_id} failed: {scrub(str(e), secrets)}") from None
    return str(getattr(info, "commit_url", None) or f"https://huggingface.co/datasets/{repo_id}")
