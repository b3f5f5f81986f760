"""The one rule that turns an episode's step rewards into the reward a trainer learns from.

Best step: the episode is worth its best judged submission (the kernel you would keep; the same
value as ``EpisodeRecord.score``). An episode without any submission (the model never called the
tool, or produced no code) is worth 0.0. An episode in which the environment failed
(``outcome == "harness_error"``, a step reward of ``None``) is no sample at all: ``None``, which a
trainer must drop, never score. The monitor's histograms use the same rule.
"""
from __future__ import annotations

from typing import Optional, Sequence


def episode_reward(step_rewards: Sequence[Optional[float]]) -> Optional[float]:
    """Best step reward; 0.0 for no steps; None if any step was a harness error."""
    if any(r is None for r in step_rewards):
        return None
    return max(step_rewards, default=0.0)
