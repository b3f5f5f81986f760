"""The one rule for the best code and the next prompt, shared by inference.py and the playground."""
from __future__ import annotations

from types import SimpleNamespace

from environment.driver import PLAYER_RETRIES, EpisodeMemory, oversized, submission_of, unsendable
from environment.models import MAX_CODE_BYTES


def obs(score: float, turn: int = 1) -> SimpleNamespace:
    return SimpleNamespace(task_id="gelu_bias", turn=turn, max_turns=5, score=score, difficulty="easy",
                           backend="cpu", prompt="Write ModelNew.", reference_code="", feedback=f"scored {score}",
                           error=None, correct=score > 0.5, compiled=True, speedup=None, flags=[])


def test_best_is_the_highest_score_earliest_on_a_tie_and_never_a_zero():
    m = EpisodeMemory(obs(0.0, 0))
    m.scored("zero", obs(0.0))
    assert m.best_code is None  # nothing to improve on
    m.scored("first", obs(0.6, 2))
    m.scored("tie", obs(0.6, 3))
    m.scored("worse", obs(0.2, 4))
    assert (m.best_code, m.best_score, m.last_code) == ("first", 0.6, "worse")
    assert len(m.stepped) == 4


def test_failures_that_are_not_scored_never_change_the_best_and_reach_the_next_prompt():
    m = EpisodeMemory(obs(0.0, 0))
    m.scored("good", obs(0.7))
    m.environment_failed("retry me", "worker died")
    assert (m.best_code, m.last_code, m.last_error, len(m.stepped)) == ("good", "retry me", "worker died", 1)
    m.player_failed("the reply has no code block defining class ModelNew")
    user = m.messages()[1]["content"]
    assert "no code block" in user and "good" in user


def test_player_errors_in_a_row_end_the_episode_after_the_retries_and_a_submission_resets_the_count():
    m = EpisodeMemory(obs(0.0, 0))
    for _ in range(PLAYER_RETRIES):
        m.player_failed("the reply has no code block defining class ModelNew")
        assert not m.gave_up()
    m.scored("good", obs(0.7))
    assert m.player_errors == 0
    for _ in range(PLAYER_RETRIES + 1):
        m.player_failed("model call failed: HTTP 500")
    assert m.gave_up() and not m.gave_up(PLAYER_RETRIES + 1)
    m.environment_failed("retry me", "worker died")  # a submission: the player did its part
    assert not m.gave_up()


def test_a_reply_is_a_submission_only_with_ModelNew_under_the_size_limit():
    code = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
    assert submission_of(f"Here:\n```python\n{code}```") == (code, None)
    assert submission_of(None, "model call failed: timed out") == (None, "model call failed: timed out")
    assert submission_of("I would fuse the kernels.") == (None, "the reply has no code block defining class ModelNew")
    big = code + "#" * (MAX_CODE_BYTES + 1) + "\n"
    none, why = submission_of(f"```python\n{big}```")
    assert none is None and why == oversized(big) and why.startswith(f"the code is {len(big.encode()) // 1024} KiB")
    assert oversized(code) is None


def test_a_memory_replayed_from_stored_steps_asks_what_the_episode_would_have_asked():
    from environment.trajectory import StepRecord
    played = EpisodeMemory(obs(0.0, 0))
    steps = []
    turns = [1, 1, 2]  # a harness error uses no turn
    for n, (code, score, reward) in enumerate([("good", 0.7, 0.7), ("flaky", 0.0, None), ("worse", 0.2, 0.2)], 1):
        o = obs(score, turns[n - 1])
        if reward is None:
            played.environment_failed(code, "worker died")
        else:
            played.scored(code, o)
        steps.append(StepRecord(step=n, code=code, reward=reward, error="worker died" if reward is None else None,
                                observation=vars(o)))
    fresh = obs(0.0, 2)  # a new environment session's reset, shifted to the turns already used
    again = EpisodeMemory.replayed(fresh, steps)
    assert (again.best_code, again.best_score, again.last_code, len(again.stepped)) == ("good", 0.7, "worse", 2)
    assert again.messages() == played.messages()


def test_text_that_is_not_utf8_is_the_players_error_named_before_the_wire():
    code = "class ModelNew:\n    s = '\udc80'\n"
    none, why = submission_of(f"```python\n{code}```")
    assert none is None and why.startswith("the code is not valid UTF-8 text (an unpaired surrogate at character 25)")
    assert unsendable("class ModelNew: pass\n") is None and unsendable("#" * (300 * 1024)) == oversized("#" * (300 * 1024))
