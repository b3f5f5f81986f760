"""What a player is told before each submission, and when a player's failure ends an episode:
one way for inference.py and the playground.

``EpisodeMemory`` holds the latest observation, the scored observations so far, the best code,
the last code and the last error, and builds the next prompt from them (``agent.build_messages``).

The rule for the best code (one rule everywhere): the submission with the highest score the
environment gave, the earliest one on a tie; a submission scored 0 is never the best (there is
nothing in it to improve on), and a step the environment failed on (harness error, no score) or
a reply without code never changes it.

The rule for the player's errors (one rule everywhere): a model that cannot be reached, an HTTP
error, a reply without code and an oversized submission are the player's, not the environment's.
They are no step: nothing is sent to the environment, no turn is used, the next prompt says what
was wrong. After ``retries`` + 1 of them in a row (``gave_up``) the episode stops where it is.
"""
from __future__ import annotations

from typing import Any, Optional

from environment.agent import build_messages, field_of, parse_reply
from environment.models import MAX_CODE_BYTES

PLAYER_RETRIES = 2  # player errors retried in a row before the episode stops (inference.py --retries)


def submission_of(text: Optional[str], error: Optional[str] = None) -> tuple[Optional[str], Optional[str]]:
    """``(code, None)`` to submit from a model's reply, or ``(None, why)`` when it is the player's error:
    the call failed (``error``), the reply holds no ModelNew, or the code is over the size limit."""
    if error is not None:
        return None, error
    parsed = parse_reply(text)
    if parsed.code is None:
        return None, parsed.error
    why = unsendable(parsed.code)
    return (None, why) if why else (parsed.code, None)


def unsendable(code: str) -> Optional[str]:
    """Why ``code`` cannot be sent as a KernelAction (the player's error), or None: text that is not valid
    UTF-8 (a lone surrogate), or over the size limit."""
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"the code is not valid UTF-8 text (an unpaired surrogate at character {e.start}): "
                "paste it again as plain text (no turn was used)")
    return oversized(code)


def oversized(code: str) -> Optional[str]:
    """Why ``code`` is too large to submit (the player's error), or None."""
    size = len(code.encode("utf-8", "surrogatepass"))
    if size <= MAX_CODE_BYTES:
        return None
    return (f"the code is {size / 1024:.0f} KiB; a submission may be at most {MAX_CODE_BYTES // 1024} KiB: "
            "remove what the kernel does not need (no turn was used)")


class EpisodeMemory:
    def __init__(self, observation: Any):
        self.obs = observation          # the latest observation (from reset or a scored step)
        self.stepped: list[Any] = []    # observations of the scored steps, oldest first
        self.best_code: Optional[str] = None
        self.best_score = 0.0
        self.last_code: Optional[str] = None
        self.last_error: Optional[str] = None
        self.player_errors = 0          # the player's errors since its last submission

    def messages(self) -> list[dict[str, str]]:
        """The chat messages asking for the next submission."""
        return build_messages(self.obs, self.best_code, self.stepped[:-1],
                              best_score=self.best_score if self.best_code else None,
                              last_code=self.last_code, last_error=self.last_error)

    def scored(self, code: str, observation: Any) -> None:
        """The environment scored ``code``."""
        self.obs = observation
        self.stepped.append(observation)
        self.last_code, self.last_error, self.player_errors = code, None, 0
        score = float(field_of(observation, "score", 0.0))
        if score > self.best_score:
            self.best_code, self.best_score = code, score

    @classmethod
    def replayed(cls, reset: Any, steps: list[Any]) -> "EpisodeMemory":
        """The memory of an episode played so far, from its stored steps (``StepRecord``s, observations as
        dicts) and a fresh ``reset`` observation of the same task (it has the prompt and reference code,
        which steps do not store): the next prompt is the one the episode would have asked for."""
        memory = cls(reset)
        for s in steps:
            if s.code is None or s.observation is None:
                continue
            if s.reward is None:
                memory.environment_failed(s.code, s.error)
            else:
                memory.scored(s.code, s.observation)
        if memory.stepped or memory.last_code:
            last = next(s.observation for s in reversed(steps) if s.observation is not None)
            memory.obs = {**last, "prompt": field_of(reset, "prompt", ""),
                          "reference_code": field_of(reset, "reference_code", ""),
                          "turn": field_of(reset, "turn", 0), "max_turns": field_of(reset, "max_turns", 1)}
        return memory

    def environment_failed(self, code: str, error: Optional[str]) -> None:
        """The environment could not score ``code`` (harness error): not the player's, no turn used."""
        self.last_code, self.last_error, self.player_errors = code, error, 0

    def player_failed(self, error: str) -> None:
        """The player produced nothing to submit; the next prompt says why."""
        self.last_error = error
        self.player_errors += 1

    def gave_up(self, retries: int = PLAYER_RETRIES) -> bool:
        """The player failed ``retries`` + 1 times in a row: the episode stops (no step, no turn)."""
        return self.player_errors > retries
