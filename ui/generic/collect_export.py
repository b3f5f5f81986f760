"""Episodes as ``openenv collect`` writes them: results.jsonl, metadata.json and a dataset card.

The records are openenv's own ``EpisodeRecord`` (openenv.core.harness.collect), written by its
``RolloutSerializer``; the card is its ``build_dataset_readme`` (YAML ``configs:`` pinning
results.jsonl for the Hub's dataset viewer) plus what this playground adds in ``extra``:

- ``player`` (human or model), ``model``, ``data_use``: every playground episode was played by a
  person or through an API (the HF router or another OpenAI-compatible URL), so it is evaluation /
  SFT data: it has chat messages and rewards but no token ids or log-probabilities for RL;
- ``hacked`` and ``hack_flags``: kernel episodes whose submissions the checks flagged as reward hacks
  are kept with their flags, never dropped;
- ``source``: ``kernel-playground``.

``reward`` is the last reward the environment emitted (as openenv's collector resolves it);
``metrics`` has every step's reward, their sum and the best one. Secrets are scrubbed like every
other export of this project.
"""
from __future__ import annotations

import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from openenv.core.harness.collect import EpisodeRecord as CollectRecord
from openenv.core.harness.collect import RolloutSerializer, build_dataset_readme

from environment.trajectory import EpisodeRecord, configured_secrets, scrub
from ui.generic.episode import GenericEpisode

EXPORT_ROOT = Path(tempfile.gettempdir()) / "kernel_playground_exports"
DATA_USE = "evaluation/sft (played by a person or through an API: messages and rewards, no token ids)"
Played = Union[GenericEpisode, EpisodeRecord]


def _last_reward(rewards: Sequence[Optional[float]]) -> float:
    for r in reversed(rewards):
        if r is not None:
            return float(r)
    return 0.0


def _metrics(rewards: Sequence[Optional[float]], **more: Any) -> dict[str, Any]:
    real = [float(r) for r in rewards if r is not None]
    return {"steps": len(rewards), "rewards": list(rewards), "return": sum(real),
            "best_reward": max(real) if real else None, **more}


def _extra(player: str, model: Optional[str], **more: Any) -> dict[str, Any]:
    return {"source": "kernel-playground", "player": player, "model": model, "data_use": DATA_USE, **more}


def from_generic(ep: GenericEpisode) -> CollectRecord:
    rewards = [s.reward for s in ep.steps]
    trace = [{"tool_name": s.tool_name, "arguments": s.action or {},
              "result": {"data": s.observation, "done": s.done, "metadata": {"reward": s.reward}, "error": s.error}}
             for s in ep.steps]
    return CollectRecord(
        episode_id=ep.episode_id, messages=ep.transcript(), reward=_last_reward(rewards), done=ep.done,
        tool_trace=trace, metrics=_metrics(rewards), verify_metrics={}, artifacts={},
        task={"env": ep.env_name, "env_url": ep.env_url, "seed": ep.seed},
        extra=_extra(ep.player, ep.model, hacked=False, hack_flags=[], created_at=ep.created_at.isoformat()))


def _hack_flags(record: EpisodeRecord) -> list[str]:
    from environment.evaluation import flags as F
    return sorted({f for s in record.steps for f in (s.observation or {}).get("flags") or [] if F.is_hack(f)})


def from_kernel(record: EpisodeRecord) -> CollectRecord:
    trace = [{"tool_name": "step", "arguments": {"code": s.code} if s.code is not None else {},
              "result": {"data": s.observation, "done": s.done,
                         "metadata": {"reward": s.reward, "outcome": (s.observation or {}).get("outcome")},
                         "error": s.error}} for s in record.steps]
    hacks = _hack_flags(record)
    return CollectRecord(
        episode_id=record.episode_id, messages=[m.model_dump() for m in record.messages],
        reward=_last_reward(record.rewards), done=bool(record.steps and record.steps[-1].done), tool_trace=trace,
        metrics=_metrics(record.rewards, score=record.score, success=record.success), verify_metrics={},
        artifacts={}, task={"env": "kernel_env", "task_id": record.task_id, "seed": record.seed,
                            "difficulty": record.difficulty},
        extra=_extra(record.player, record.model, hacked=bool(hacks), hack_flags=hacks,
                     created_at=record.created_at.isoformat()))


def to_collect(episode: Played) -> CollectRecord:
    return from_generic(episode) if isinstance(episode, GenericEpisode) else from_kernel(episode)


CARD_EXTRA = """
## What this playground adds

Exported from the Kernel Playground (a playground for any OpenEnv server). Every episode was played
by a person or by a model through an API, so it is **evaluation / SFT data**: `messages` and rewards,
no token ids or log-probabilities. `extra.player` says who played (`human` or `model`, with
`extra.model`); `extra.hacked` and `extra.hack_flags` mark episodes whose submissions were flagged as
reward hacks: they are kept, not dropped, so filter them yourself
(`ds.filter(lambda r: not r["extra"]["hacked"])`). `task` names the environment (and seed).
"""


def write_collect(episodes: Iterable[Played], folder: Optional[Path] = None,
                  secrets: Iterable[Optional[str]] = ()) -> Path:
    """results.jsonl, metadata.json and README.md in ``folder`` (a fresh private one by default)."""
    records = [to_collect(e) for e in episodes]
    if not records:
        raise ValueError("no episodes to export yet: play at least one step first")
    found = configured_secrets(secrets)
    folder = Path(folder) if folder else EXPORT_ROOT / uuid.uuid4().hex / "openenv_collect"
    folder.mkdir(parents=True, exist_ok=True)
    serializer = RolloutSerializer(folder)
    if serializer.results_path.exists():
        serializer.results_path.unlink()
    for record in records:
        serializer.write_episode(CollectRecord(**scrub(record.to_dict(), found)))
    envs = sorted({str((r.task or {}).get("env")) for r in records})
    serializer.write_metadata(scrub({
        "env": envs[0] if len(envs) == 1 else envs,
        "env_base_url": sorted({str((r.task or {}).get("env_url")) for r in records if (r.task or {}).get("env_url")}),
        "provider": "kernel-playground",
        "model": sorted({str(r.extra.get("model")) for r in records if r.extra.get("model")}),
        "players": sorted({str(r.extra.get("player")) for r in records}),
        "num_episodes": len(records),
        "num_hacked": sum(1 for r in records if r.extra.get("hacked")),
        "data_use": DATA_USE,
        "keep_losses": True,
        "exported_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    }, found))
    (folder / "README.md").write_text(build_dataset_readme(folder) + CARD_EXTRA, encoding="utf-8")
    return folder


def collect_files(episodes: Iterable[Played]) -> list[str]:
    """The three files of a fresh export, for a download component."""
    folder = write_collect(episodes)
    return [str(folder / name) for name in ("results.jsonl", "metadata.json", "README.md")]
