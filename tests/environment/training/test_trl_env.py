"""The TRL tool environment against the real server: a model's oversized submission is the model's error,
refused before the wire (KernelAction.code has a max_length), never the environment's failure."""
from __future__ import annotations

from environment.models import MAX_CODE_BYTES
from environment.training.trl_env import KernelToolEnv

HONEST = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
          "    def __init__(self):\n        super().__init__()\n\n"
          "    def forward(self, x, bias):\n        return torch.nn.functional.gelu(x + bias)\n")


def test_an_oversized_submission_is_the_models_error_and_the_episode_goes_on(env_server):  # noqa: F811
    env = KernelToolEnv(env_server)
    env.reset(task_id="gelu_bias", seed=0, max_turns=2)
    reply = env.submit_kernel(HONEST + "#" * (MAX_CODE_BYTES + 1))
    assert reply.startswith("Not submitted:") and "at most 256 KiB" in reply, reply
    assert "Environment error" not in reply
    reply = env.submit_kernel(HONEST)
    assert "Environment error" not in reply and "Not submitted" not in reply, reply
    assert env.get_reward() is not None
