"""The one rule for the best code and the next prompt, shared by inference.py and the playground."""
from __future__ import annotations

from types import SimpleNamespace

from environment.driver import EpisodeMemory


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
