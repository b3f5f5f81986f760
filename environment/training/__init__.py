"""Training against kernel_env: the reward rule (no extra dependencies) and the TRL adapter
(``environment.training.trl_env``, needs the ``trl`` extra)."""
from environment.training.reward_rule import episode_reward

__all__ = ["episode_reward"]
