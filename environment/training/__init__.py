"""Training against kernel_env: the reward rule (no extra dependencies), the TRL adapter
(``environment.training.trl_env``) and TRL's GRPOTrainer with one trainer's evaluations in flight together
(``environment.training.trainer``); both need the ``trl`` extra."""
from environment.training.reward_rule import episode_reward

__all__ = ["episode_reward"]
