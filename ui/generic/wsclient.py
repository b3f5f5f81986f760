"""One visitor's session with an OpenEnv server over its ``/ws`` (openenv's EnvClient protocol).

Messages are ``{"type": "reset" | "step" | "state" | "mcp" | "close", "data": ...}``; the server
answers ``{"type": "observation", "data": {"observation", "reward", "done"}}``, ``{"type": "state",
"data": ...}``, ``{"type": "mcp", "data": <JSON-RPC response>}`` or ``{"type": "error", "data":
{"message", "code"}}`` (openenv.core.env_server.http_server, openenv.core.env_client). Each session
owns its socket, so each visitor has an environment instance of their own.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Optional

from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection, connect

from ui.generic.target import TIMEOUT_S, Target, TargetError

STEP_TIMEOUT_S = 600.0  # a step may evaluate for minutes (kernel_env on a loaded host)
MAX_MESSAGE_BYTES = 32 * 2**20


class EnvSession:
    def __init__(self, target: Target):
        self.target = target
        self._ws: Optional[ClientConnection] = None
        self._lock = threading.Lock()
        self._rpc_id = 0

    def _socket(self) -> ClientConnection:
        if self._ws is None:
            try:
                ws = connect(self.target.ws_url, open_timeout=TIMEOUT_S, max_size=MAX_MESSAGE_BYTES,
                                   ping_interval=20, ping_timeout=60)
                self._ws = ws.__enter__()  # held across requests, closed by close(): no with-block fits
            except InvalidStatus as e:
                raise TargetError(f"{self.target.ws_url} refused the session (HTTP {e.response.status_code}): the "
                                  "server may be at its session limit; try again later") from None
            except (OSError, WebSocketException, TimeoutError) as e:
                raise TargetError(f"cannot open {self.target.ws_url} ({type(e).__name__}: {e}): the server must "
                                  "serve openenv's /ws") from None
        return self._ws

    def request(self, kind: str, data: Any = None, timeout_s: float = STEP_TIMEOUT_S) -> dict[str, Any]:
        message = {"type": kind} if data is None else {"type": kind, "data": data}
        with self._lock:
            ws = self._socket()
            try:
                ws.send(json.dumps(message))
                raw = ws.recv(timeout=timeout_s)
            except TimeoutError:
                self._drop()  # a late answer would pair with the next request
                raise TargetError(f"{self.target.name} did not answer {kind} within {timeout_s:g} s") from None
            except ConnectionClosed as e:
                self._drop()
                raise TargetError(f"{self.target.name} closed the session ({e.rcvd.reason if e.rcvd else 'no reason'}"
                                  "): reset to start a new one") from None
        try:
            reply = json.loads(raw)
        except ValueError:
            raise TargetError(f"{self.target.name} answered {kind} with something that is not JSON") from None
        if reply.get("type") == "error":
            data = reply.get("data") or {}
            raise TargetError(f"{self.target.name} refused the {kind}: {data.get('message', 'no message')} "
                              f"({data.get('code', 'no code')})")
        return reply

    def reset(self, **kwargs: Any) -> dict[str, Any]:
        return self.request("reset", {k: v for k, v in kwargs.items() if v is not None}).get("data") or {}

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        return self.request("step", action).get("data") or {}

    def state(self) -> dict[str, Any]:
        return self.request("state", timeout_s=TIMEOUT_S).get("data") or {}

    def mcp(self, method: str, params: Optional[dict] = None) -> dict[str, Any]:
        self._rpc_id += 1
        body = {"jsonrpc": "2.0", "method": method, "id": self._rpc_id, "params": params or {}}
        return self.request("mcp", body, timeout_s=TIMEOUT_S).get("data") or {}

    def tools(self) -> list[dict[str, Any]]:
        """The environment's MCP tools (name, description, inputSchema); [] when it exposes none."""
        try:
            reply = self.mcp("tools/list")
        except TargetError:
            return []
        result = reply.get("result") if isinstance(reply, dict) else None
        tools = (result or {}).get("tools") if isinstance(result, dict) else None
        # MCP says inputSchema; openenv-core 0.3.0 serializes its Tool model as input_schema
        return [{**t, "inputSchema": t.get("inputSchema") or t.get("input_schema") or {"type": "object"}}
                for t in tools or [] if isinstance(t, dict) and t.get("name")]

    def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                ws.close()
            except Exception:
                pass

    def close(self) -> None:
        with self._lock:
            if self._ws is not None:
                try:
                    self._ws.send(json.dumps({"type": "close"}))
                except Exception:
                    pass
            self._drop()
