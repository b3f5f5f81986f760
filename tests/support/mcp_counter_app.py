"""A tiny MCP-tool environment built only from openenv's own MCP machinery (MCPEnvironment, FastMCP,
CallToolAction), to check that the Any env tab gives each MCP tool a form of its own.

Served by ``tests.support.openenv_template.mcp_env`` with the older openenv-core 0.3.0 from PyPI
(``.venv-openenv-core``, which ships fastmcp); never imported by the project.
"""
from typing import Any, Optional

from fastmcp import FastMCP
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment  # noqa: F401  (openenv's base, for readers)
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.env_server.types import Observation, State


class CounterEnvironment(MCPEnvironment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        mcp = FastMCP("counter")
        self._state = State(episode_id="counter", step_count=0)
        self.total = 0

        @mcp.tool
        def add(n: int) -> int:
            """Add n to the counter and return the new total."""
            self.total += n
            return self.total

        @mcp.tool
        def shout(text: str, times: int = 1) -> str:
            """Return text in capitals, repeated."""
            return " ".join([text.upper()] * times)

        super().__init__(mcp)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> Observation:
        self.total = 0
        self._state = State(episode_id=episode_id or "counter", step_count=0)
        return Observation(done=False, reward=0.0, metadata={"total": 0})

    def _step_impl(self, action: Any, timeout_s: Optional[float] = None, **kwargs: Any) -> Observation:
        return Observation(done=False, reward=0.0, metadata={"error": "call a tool"})

    @property
    def state(self) -> State:
        return self._state


app = create_app(CounterEnvironment, CallToolAction, CallToolObservation, env_name="counter")
