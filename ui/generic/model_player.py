"""A chat model plays any OpenEnv environment: the action schema (or each MCP tool) is given to it as a tool.

Any OpenAI-compatible endpoint (the Hugging Face router by default; the token rules are ui.players'):
the reply's first tool call is the action. A model without tool calling may answer with a JSON
object, or, where the action has one required string field (``code``), a fenced code block.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any, Optional

from environment.trajectory import configured_secrets, scrub
from ui.generic.schema_form import as_tool, fields
from ui.players import ModelSettings

_FENCE = re.compile(r"```[\w+-]*\s*\n(.*?)```", re.DOTALL)


class ModelFailure(Exception):
    """No action came out of the model (unreachable, HTTP error, a reply without a usable action)."""

    def __init__(self, message: str, raw_reply: Optional[str] = None):
        super().__init__(message)
        self.raw_reply = raw_reply


def tools_for(action_schema: dict, mcp_tools: list[dict], description: str) -> list[dict]:
    if mcp_tools:
        return [as_tool(t["name"], str(t.get("description") or ""), t.get("inputSchema") or {"type": "object"})
                for t in mcp_tools]
    return [as_tool("step", description or "Take one step in the environment.", action_schema)]


def _fallback(text: str, action_schema: dict) -> Optional[dict]:
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        candidate = candidate.strip()
        if candidate.startswith("{"):
            try:
                value = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    required = [f for f in fields(action_schema) if f.required]
    if len(required) == 1 and required[0].kind in ("string", "code") and len(required[0].path) == 1:
        blocks = _FENCE.findall(text)
        if blocks:
            return {required[0].path[0]: blocks[-1]}
    return None


def ask(settings: ModelSettings, token: Optional[str], messages: list[dict], tools: list[dict],
        action_schema: dict) -> tuple[str, dict, dict, float]:
    """(tool name, arguments, the assistant message to append, latency ms), or a ModelFailure."""
    from openai import APIConnectionError, APIStatusError, APITimeoutError, AuthenticationError, OpenAI

    secrets = configured_secrets([token])
    t0 = time.monotonic()
    try:
        client = OpenAI(base_url=settings.base_url, api_key=token or "no-token", timeout=settings.timeout_s,
                        max_retries=0)
        response = client.chat.completions.create(model=settings.model, messages=messages, tools=tools,
                                                  temperature=settings.temperature, max_tokens=settings.max_tokens)
    except APITimeoutError:
        raise ModelFailure(f"the model did not answer within {settings.timeout_s:.0f} s") from None
    except AuthenticationError:
        raise ModelFailure("the endpoint refused the token (HTTP 401): check the token field") from None
    except APIConnectionError:
        raise ModelFailure(f"cannot reach {settings.base_url}: check the API base URL") from None
    except APIStatusError as e:
        raise ModelFailure(f"the endpoint answered HTTP {e.status_code}: "
                           f"{scrub(' '.join(str(e).split())[:300], secrets)}") from None
    except Exception as e:
        raise ModelFailure(f"model call failed: {type(e).__name__}: {scrub(str(e)[:300], secrets)}") from None
    latency = round((time.monotonic() - t0) * 1000.0, 1)
    message = response.choices[0].message if getattr(response, "choices", None) else None
    if message is None:
        raise ModelFailure("the model returned no choices")
    text = message.content or ""
    calls = message.tool_calls or []
    if calls:
        call = calls[0]
        try:
            args = json.loads(call.function.arguments or "{}")
        except ValueError:
            raise ModelFailure(f"the model called {call.function.name} with arguments that are not JSON",
                               call.function.arguments) from None
        assistant = {"role": "assistant", "content": text, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments or "{}"}}]}
        return call.function.name, args if isinstance(args, dict) else {}, assistant, latency
    action = _fallback(text, action_schema)
    if action is None:
        raise ModelFailure("the reply has no tool call and no JSON action: use a model with tool calling",
                           text or None)
    return "step", action, {"role": "assistant", "content": text}, latency


def observation_message(assistant: dict, result: dict[str, Any]) -> dict:
    """What the model reads after its action: a tool message after a tool call, else a user message."""
    content = json.dumps(result, default=str)
    calls = assistant.get("tool_calls")
    if calls:
        return {"role": "tool", "tool_call_id": calls[0]["id"], "content": content}
    return {"role": "user", "content": content}
