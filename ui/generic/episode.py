"""One episode played against any OpenEnv server: what was sent, what came back, who played.

The same record is stored (ui.generic.runs), rendered (ui.generic.render) and exported in
``openenv collect``'s format (ui.generic.collect_export).
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field


class GenericStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int
    tool_name: str = Field("step", description="'step' for a plain action, else the MCP tool called.")
    action: Optional[dict[str, Any]] = Field(None, description="What was sent; null when the player sent nothing.")
    observation: Optional[dict[str, Any]] = None
    reward: Optional[float] = None
    done: bool = False
    error: Optional[str] = None
    raw_reply: Optional[str] = Field(None, description="A model player's reply as received.")
    latency_ms: float = 0.0


class GenericEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    env_url: str
    env_name: str
    seed: Optional[int] = None
    player: str = Field("human", description="human or model.")
    model: Optional[str] = None
    reset_observation: dict[str, Any] = Field(default_factory=dict)
    steps: list[GenericStep] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list, description="A model player's chat, as sent.")
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc).replace(microsecond=0))

    @property
    def total_reward(self) -> float:
        return float(sum(s.reward for s in self.steps if s.reward is not None))

    @property
    def done(self) -> bool:
        return bool(self.steps and self.steps[-1].done)

    def transcript(self) -> list[dict[str, Any]]:
        """The chat: a model player's own messages, else one built from the steps (system, reset
        observation, then per step the assistant's tool call and the tool's observation)."""
        if self.messages:
            return [dict(m) for m in self.messages]
        out: list[dict[str, Any]] = [
            {"role": "system", "content": f"You act in the OpenEnv environment {self.env_name} by calling a tool."},
            {"role": "user", "content": json.dumps(self.reset_observation, default=str)}]
        for s in self.steps:
            if s.action is None:
                continue
            call_id = f"call-{s.step}"
            out.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": s.tool_name, "arguments": json.dumps(s.action, default=str)}}]})
            result = {"observation": s.observation, "reward": s.reward, "done": s.done, "error": s.error}
            out.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, default=str)})
        return out
