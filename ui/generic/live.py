"""One browser's live connection to an OpenEnv server: connect, reset, step by hand or by a model.

Sessions are keyed by the browser's id (as the kernel mode's are), so a reload finds its socket and
its episode again; every step is saved to the store (ui.generic.runs) as it happens.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ui.generic.episode import GenericEpisode, GenericStep
from ui.generic.model_player import ModelFailure, ask, observation_message, tools_for
from ui.generic.runs import runs
from ui.generic.schema_form import FormField, fields
from ui.generic.target import Target, TargetError, connect
from ui.generic.wsclient import EnvSession
from ui.players import ModelSettings

IDLE_S = 3600.0


@dataclass
class Live:
    target: Target
    env: EnvSession
    tools: list[dict] = field(default_factory=list)
    episode: Optional[GenericEpisode] = None
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forms(self) -> dict[str, list[FormField]]:
        """One form per MCP tool, else one for the action schema (named ``step``)."""
        if self.tools:
            return {t["name"]: fields(t.get("inputSchema") or {}) for t in self.tools}
        return {"step": fields(self.target.action_schema)}

    def reset(self, seed: Optional[int]) -> GenericEpisode:
        data = self.env.reset(seed=seed)
        self.episode = GenericEpisode(env_url=self.target.url, env_name=self.target.name, seed=seed,
                                      reset_observation=data.get("observation") or {})
        return self.episode

    def _need_episode(self) -> GenericEpisode:
        if self.episode is None:
            raise TargetError("press Reset first: there is no episode yet")
        if self.episode.done:
            raise TargetError("the episode is done: press Reset for a new one")
        return self.episode

    def step(self, tool: str, args: dict[str, Any], **extra: Any) -> GenericStep:
        episode = self._need_episode()
        action = {"type": "call_tool", "tool_name": tool, "arguments": args} if self.tools else args
        t0 = time.monotonic()
        try:
            data = self.env.step(action)
        except TargetError as e:
            step = GenericStep(step=len(episode.steps) + 1, tool_name=tool, action=args, error=str(e), **extra)
        else:
            reward = data.get("reward")
            step = GenericStep(step=len(episode.steps) + 1, tool_name=tool, action=args,
                               observation=data.get("observation") or {},
                               reward=float(reward) if isinstance(reward, (int, float)) else None,
                               done=bool(data.get("done")), **extra)
        step.latency_ms = round((time.monotonic() - t0) * 1000.0, 1)
        episode.steps.append(step)
        return step

    def human_step(self, tool: str, args: dict[str, Any]) -> GenericStep:
        episode = self._need_episode()
        if episode.player == "model" and episode.steps:
            episode.player = "mixed"
        return self.step(tool, args)

    def model_step(self, settings: ModelSettings, token: Optional[str]) -> GenericStep:
        episode = self._need_episode()
        if not episode.messages:
            description = str(self.target.metadata.get("description") or "")
            episode.messages = [
                {"role": "system", "content": f"You act in the OpenEnv environment {self.target.name}. "
                 f"{description} Call one tool per turn with a valid action."},
                {"role": "user", "content": json.dumps({"observation": episode.reset_observation}, default=str)}]
        if not episode.steps:
            episode.player = "model"
        elif episode.player != "model":
            episode.player = "mixed"
        episode.model = settings.model
        tools = tools_for(self.target.action_schema, self.tools, str(self.target.metadata.get("description") or ""))
        try:
            name, args, assistant, latency = ask(settings, token, episode.messages, tools, self.target.action_schema)
        except ModelFailure as e:
            raise TargetError(f"the model produced no action: {e}") from None
        if self.tools and name not in {t["name"] for t in self.tools}:
            raise TargetError(f"the model called {name!r}, which this environment has no tool for")
        episode.messages.append(assistant)
        step = self.step(name if self.tools else "step", args, raw_reply=assistant.get("content") or None)
        step.latency_ms = latency
        episode.messages.append(observation_message(assistant, {"observation": step.observation, "reward": step.reward,
                                                                "done": step.done, "error": step.error}))
        return step


class LiveSessions:
    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[str, Live] = {}

    def get(self, browser_id: Optional[str]) -> Optional[Live]:
        with self._lock:
            live = self._live.get(browser_id or "")
            if live is not None:
                live.used = time.monotonic()
            return live

    def connect(self, browser_id: str, url: str) -> Live:
        target = connect(url)
        env = EnvSession(target)
        live = Live(target=target, env=env, tools=env.tools())
        self._reap()
        with self._lock:
            old = self._live.pop(browser_id, None)
            self._live[browser_id] = live
        if old is not None:
            old.env.close()
        return live

    def _reap(self) -> None:
        now = time.monotonic()
        with self._lock:
            idle = [k for k, v in self._live.items() if now - v.used > IDLE_S]
            dropped = [self._live.pop(k) for k in idle]
        for live in dropped:
            live.env.close()


LIVE = LiveSessions()


def save(browser_id: Optional[str], live: Live) -> None:
    if live.episode is not None and browser_id:
        runs().save(browser_id, live.episode)
