"""TRL's GRPOTrainer for kernel_env, with one trainer's evaluations in flight together (needs the ``trl`` extra).

TRL 1.16 runs a generation batch's tool calls one rollout after another (``GRPOTrainer._tool_call_loop``
calls each rollout's sync tool and waits for it; async tools are awaited per rollout too), so one trainer
keeps at most one evaluation in flight however many workers or Ray actors the server has. This subclass
changes nothing in that loop: it hands the loop's own message lists to ``KernelEnvFactory.watch``, and the
first ``submit_kernel`` call of each round begins every rollout's pending call at once (each on its own
WebSocket session); TRL's calls then collect the results in TRL's order. The same steps run, in the same
episodes, with the same code, so the rewards are those of the serial loop; only the waiting overlaps. This
covers single-turn GRPO (one round) and every round of a multi-turn rollout.

It also keeps, per rollout, the reward it trained on next to the episode id (``reward_ledger``), read where
TRL computes the rewards, so a run can be checked against the server's records.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any

from environment.training.trl_env import KernelEnvFactory


def kernel_grpo_trainer_class():
    from trl import GRPOTrainer

    class KernelGRPOTrainer(GRPOTrainer):
        reward_ledger: list[dict[str, Any]]

        def _tool_call_loop(self, prompts, prompt_ids, completion_ids, completions, *args, **kwargs):
            factories = [f for f in (self.environment_factories or {}).values() if isinstance(f, KernelEnvFactory)]
            with contextlib.ExitStack() as stack:
                for factory in factories:
                    stack.enter_context(factory.watch(self.environments or [], completions))
                return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *args, **kwargs)

        def _calculate_rewards(self, inputs, *args, **kwargs):  # TRL 1.16: one row per rollout, one column per source
            rewards = super()._calculate_rewards(inputs, *args, **kwargs)
            ledger = self.__dict__.setdefault("reward_ledger", [])
            for env, row, used in zip(self.environments or [], inputs, rewards[:, -1].tolist()):
                ledger.append({"episode_id": env.episode_id, "task_id": row.get("task_id"), "seed": row.get("seed"),
                               "reward": None if math.isnan(used) else used})
            return rewards

    return KernelGRPOTrainer
