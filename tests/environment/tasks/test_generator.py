"""Generated tasks: 50 draws across families and levels, each validating itself and starting an
episode; a subset played for real (the reference as ModelNew is correct, a wrong variant is not)."""
from __future__ import annotations

import random

import pytest

from environment.env import KernelEnvironment, KernelEnvError
from environment.models import KernelAction
from environment.tasks import generator
from environment.tasks.generator import FAMILIES, LEVELS, task_id, validate
from environment.tasks.kernelbench import reference_as_submission
from environment.tasks.task import TaskError

_rng = random.Random(2024)
DRAWS = [task_id(FAMILIES[i % len(FAMILIES)], LEVELS[(i // len(FAMILIES)) % len(LEVELS)], _rng.randrange(10**6))
         for i in range(50)]
PLAYED = [DRAWS[i] for i in (0, 1, 2, 3, 4, 6, 12, 18, 23, 24)]   # every family, levels 1-5


@pytest.mark.parametrize("tid", DRAWS)
def test_a_generated_task_validates_itself_and_starts_an_episode(tid):
    task = generator.generate(tid)
    validate(task.reference_code, task.reference_path)  # finite, not constant, depends on every input
    assert task.reference_path.read_text() == task.reference_code
    level = int(tid.split("/")[2])
    assert task.difficulty == generator.difficulty_of(level) and f"level {level}" in task.description
    assert (task.hidden_shape is not None) == (level >= 3)
    env = KernelEnvironment()
    obs = env.reset(task_id=tid, seed=1)
    assert obs.task_id == tid and "class Model" in obs.prompt and obs.reference_code == task.reference_code


def test_the_same_id_gives_the_same_task_anywhere():
    tid = DRAWS[7]
    first = generator.generate(tid)
    generator.generate.cache_clear()
    again = generator.generate(tid)
    assert again.reference_code == first.reference_code and again.cpu_shapes == first.cpu_shapes
    assert generator.generate(task_id("elementwise", 2, 1)).reference_code != generator.generate(
        task_id("elementwise", 2, 2)).reference_code


def test_the_level_knob_lengthens_the_chain_and_changes_the_dtype():
    ops = [generator.generate(task_id("elementwise", level, 5)).reference_code.count("\n        t = ")
           for level in LEVELS]
    assert ops == sorted(ops) and ops[-1] > ops[0]
    assert generator.generate(task_id("elementwise", 5, 5)).dtype == "float16"
    assert generator.generate(task_id("elementwise", 1, 5)).dtype == "float32"


@pytest.mark.parametrize("bad", ["gen/convolution/2/1", "gen/elementwise/9/1", "gen/elementwise/two/1"])
def test_a_malformed_generated_id_is_refused_with_the_form(bad):
    with pytest.raises(TaskError, match="gen/<family>/<level>/<seed>"):
        generator.generate(bad)
    with pytest.raises(KernelEnvError, match="gen/<family>/<level>/<seed>"):
        KernelEnvironment().reset(task_id=bad)


@pytest.mark.slow
@pytest.mark.parametrize("tid", PLAYED)
def test_a_generated_episode_plays_the_reference_right(tid):
    env = KernelEnvironment()
    env.reset(task_id=tid, seed=3, max_turns=2)
    obs = env.step(KernelAction(code=reference_as_submission(env._task.reference_code)))
    assert obs.outcome == "ok" and obs.correct, obs.feedback
    assert obs.reward > 0 and env.state.turn == 1


@pytest.mark.slow
@pytest.mark.parametrize("tid", PLAYED[:3])
def test_a_generated_episode_fails_a_wrong_variant(tid):
    env = KernelEnvironment()
    env.reset(task_id=tid, seed=3, max_turns=2)
    obs = env.step(KernelAction(code=reference_as_submission(env._task.reference_code, wrong=True)))
    assert obs.outcome == "ok" and not obs.correct
