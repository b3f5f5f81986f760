"""An episode replays bit for bit: the same code, task and seed in fresh sessions give the same
observation JSON, ids aside (OpenEnv's episode_determinism).

- The evaluation's clocks (``wall_s``, ``compute_s``, ``stage_s``) are wall time: they go to the
  server log (logger ``kernel_env.timing``), not the observation, where they are 0 / empty.
- The trial seeds mix the server secret, the public seed, the task and a salt. A client that names
  its seed gets a salt made of that seed and the turn, so replaying it replays the trials; without a
  seed the server draws one and the salt is the episode id (fresh trials in every episode).
"""
from __future__ import annotations

import logging
from typing import Optional

from environment.evaluation.result import EvalResult

log = logging.getLogger("kernel_env.timing")
CLOCKS = {"wall_s": 0.0, "compute_s": 0.0, "stage_s": {}}


def without_clocks(result: EvalResult, episode_id: Optional[str]) -> EvalResult:
    """The record for the observation; its clocks are logged here."""
    log.info("episode %s task %s: evaluation %.3f s wall, %.3f s compute, stages %s", episode_id, result.task_id,
             result.wall_s, result.compute_s, {k: round(v, 3) for k, v in result.stage_s.items()})
    return result.model_copy(update=CLOCKS)


def salt_base(episode_id: str, seed_given: bool, seed: int) -> str:
    return f"seed:{seed}" if seed_given else episode_id
