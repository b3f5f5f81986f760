"""The evaluation's own code stays light: a forked evaluation child that imported OpenEnv's server (and Gradio
behind it) through the reward paid 10-20 s of every evaluation on a loaded host."""
from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from environment.evaluation import harness
from environment.evaluation.child import serve
from environment.evaluation.evaluator import credit, gpu_shape, modeled_speed, pipeline
from environment.evaluation.replay import sampled, coverage
# the GPU-shape skip test reads the reward's floor; malformed reports end it after its imports
assert credit.not_worth_pricing({}, {}, {}, {}, {}) == ""
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("openenv", "gradio", "fastapi"))
print(heavy)
"""


def test_the_evaluation_path_imports_no_openenv_or_gradio():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stdout[:2000]


def test_the_reward_scale_is_the_one_the_rubric_scores_with():
    from environment import reward, reward_scale, rubric
    from environment import config
    assert rubric.SPEEDUP_FLOOR is reward_scale.SPEEDUP_FLOOR is config.SPEEDUP_FLOOR and reward.speed_fraction is reward_scale.speed_fraction
    assert reward_scale.speed_fraction(reward_scale.SPEEDUP_FLOOR) == 0.0 and reward_scale.speed_fraction(4.0) == 1.0
