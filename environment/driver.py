"""What a player is told before each submission, kept one way for inference.py and the playground.

``EpisodeMemory`` holds the latest observation, the scored observations so far, the best code,
the last code and the last error, and builds the next prompt from them (``agent.build_messages``).

The rule for the best code (one rule everywhere): the submission with the highest score the
environment gave, the earliest one on a tie; a submission scored 0 is never the best (there is
nothing in it to improve on), and a step the environment failed on (harness error, no score) or
a reply without code never changes it.
"""
from __future__ import annotations

from typing import Any, Optional

from environment.agent import build_messages


class EpisodeMemory:
    def __init__(self, observation: Any):
        self.obs = observation          # the latest observation (from reset or a scored step)
        self.stepped: list[Any] = []    # observations of the scored steps, oldest first
        self.best_code: Optional[str] = None
        self.best_score = 0.0
        self.last_code: Optional[str] = None
        self.last_error: Optional[str] = None

    def messages(self) -> list[dict[str, str]]:
        """The chat messages asking for the next submission."""
        return build_messages(self.obs, self.best_code, self.stepped[:-1],
                              best_score=self.best_score if self.best_code else None,
                              last_code=self.last_code, last_error=self.last_error)

    def scored(self, code: str, observation: Any) -> None:
        """The environment scored ``code``."""
        self.obs = observation
        self.stepped.append(observation)
        self.last_code, self.last_error = code, None
        score = float(getattr(observation, "score", 0.0) or 0.0)
        if score > self.best_score:
            self.best_code, self.best_score = code, score

    def environment_failed(self, code: str, error: Optional[str]) -> None:
        """The environment could not score ``code`` (harness error): not the player's, no turn used."""
        self.last_code, self.last_error = code, error

    def player_failed(self, error: str) -> None:
        """The player produced nothing to submit; the next prompt says why."""
        self.last_error = error
