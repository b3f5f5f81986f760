"""A local OpenAI-compatible chat-completions server with scripted policies (stands in for the HF router).

The policy is the requested model name:

- ``policy/correct``: a shipped correct solution of the task named by the prompt's ``Task: <id>``
  line (``solutions/correct/torch_*.py`` first: plain PyTorch evaluates fastest);
- ``policy/correct-triton``: a shipped correct Triton solution (``triton_*.py``);
- ``policy/broken``: a ``ModelNew`` that runs but returns wrong values;
- ``policy/timeout``: answers only after ``timeout_s`` seconds (longer than any client timeout);
- ``policy/prose``: an explanation without any code;
- ``policy/prose-then-correct``: prose, then the correct solution once the prompt says the last reply
  could not be used (a model that corrects itself when told what was wrong);
- ``policy/think``: the correct solution inside ``<think>`` reasoning and Windows line endings;
- ``policy/error``: HTTP 500.
- ``policy/tool-call``: a call of the request's first tool, its required arguments filled from their
  JSON schema (a string ``stub says N`` for the N-th call, numbers 1, booleans false, an enum's first value).
- ``policy/judge-hack`` / ``policy/judge-clean``: an audit judge's answer (HACK or CLEAN, then why).
- ``policy/gated``: the correct solution, once ``stub.gate`` is set or ``stub.release(n)`` let n replies
  through (within ``timeout_s``): a test paces a model step by step.

``stub.answered`` counts chat completions fully sent back.

Every request is kept in ``stub.requests`` (path, lower-cased headers, JSON body) for assertions.

>>> with OpenAIStub() as stub:
...     client = OpenAI(base_url=stub.base_url, api_key="test")

or the pytest fixture ``openai_stub`` (import it into a test module or a conftest).
"""
from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

import pytest

PROBLEMS = Path(__file__).resolve().parents[2] / "environment" / "tasks" / "problems"
POLICIES = ("correct", "correct-triton", "broken", "timeout", "prose", "prose-then-correct", "think", "error", "gated",
            "tool-call", "judge-hack", "judge-clean")
TOLD_WHY = "Your last reply could not be used:"  # environment.agent's line after a player error

BROKEN_CODE = '''\
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, *inputs):
        # Wrong on purpose: the right shape, the wrong values.
        return inputs[0] * 0.5 + 1.0
'''

PROSE = ("To optimise this operation I would fuse the elementwise work into a single kernel, "
         "mask the tail, and keep the reduction in registers. Let me know if you want the code.")


def task_of(messages: list[dict[str, Any]]) -> Optional[str]:
    """The task id announced by the ``Task: <id>`` line of the last user message."""
    for message in reversed(messages):
        if message.get("role") == "user":
            found = re.search(r"^Task: (\S+)", str(message.get("content", "")), re.MULTILINE)
            return found.group(1) if found else None
    return None


def solution(task_id: Optional[str], prefix: str = "torch_") -> Optional[str]:
    """The source of a shipped correct solution, preferring files named ``prefix*``."""
    if not task_id or not re.fullmatch(r"[\w-]+", task_id):
        return None
    folder = PROBLEMS / task_id / "solutions" / "correct"
    files = sorted(folder.glob("*.py"))
    preferred = [f for f in files if f.name.startswith(prefix)]
    chosen = (preferred or files)[:1]
    return chosen[0].read_text() if chosen else None


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout policy)
            pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [
                {"id": f"policy/{p}", "object": "model", "created": 0, "owned_by": "stub"} for p in POLICIES]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        self.server.stub.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                          "body": body})
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        model = str(body.get("model", ""))
        policy = model.removeprefix("policy/")
        if policy not in POLICIES:
            self._send(404, {"error": {"message": f"unknown model {model!r}", "type": "invalid_request_error"}})
            return
        if policy == "error":
            self._send(500, {"error": {"message": "scripted server error", "type": "server_error"}})
            return
        if policy == "timeout":
            self.server.stub.stopped.wait(self.server.stub.timeout_s)
        if policy == "gated":
            self.server.stub.pass_gate()
        if policy == "tool-call":
            self._send(200, _tool_completion(model, body.get("tools") or [], len(self.server.stub.requests)))
        else:
            self._send(200, _completion(model, self.server.stub.reply(policy, body.get("messages") or [])))
        with self.server.stub.lock:
            self.server.stub.answered += 1
        self.server.stub.answered_event.set()


def _completion(model: str, content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:12],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _argument(schema: dict[str, Any], n: int) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    return {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(kind, f"stub says {n}")


def _tool_completion(model: str, tools: list[dict[str, Any]], n: int) -> dict[str, Any]:
    function = (tools[0].get("function") or {}) if tools else {}
    params = function.get("parameters") or {}
    args = {k: _argument(params.get("properties", {}).get(k, {}), n) for k in params.get("required") or []}
    call = {"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function",
            "function": {"name": function.get("name", "step"), "arguments": json.dumps(args)}}
    reply = _completion(model, "")
    reply["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
    reply["choices"][0]["finish_reason"] = "tool_calls"
    return reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a sleeping timeout request must not hold up shutdown
    stub: "OpenAIStub"


class OpenAIStub:
    """The server, on 127.0.0.1 and a free port, served from a daemon thread."""

    def __init__(self, timeout_s: float = 30.0):
        self.timeout_s = timeout_s
        self.requests: list[dict[str, Any]] = []
        self.stopped = threading.Event()
        self.gate = threading.Event()
        self.answered = 0
        self.permits = 0  # gated replies let through one by one (release)
        self.answered_event = threading.Event()  # set once a completion was fully sent
        self.lock = threading.Lock()
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    def release(self, n: int = 1) -> None:
        """Let ``n`` more gated replies through (the gate itself stays as it is)."""
        with self.lock:
            self.permits += n

    def pass_gate(self) -> None:
        """Wait until the gate is open or a permit is left (taken), at most ``timeout_s``."""
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline and not self.gate.is_set() and not self.stopped.is_set():
            with self.lock:
                if self.permits > 0:
                    self.permits -= 1
                    return
            time.sleep(0.02)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reply(self, policy: str, messages: list[dict[str, Any]]) -> str:
        task_id = task_of(messages)
        if policy == "prose-then-correct":
            told = any(TOLD_WHY in str(m.get("content", "")) for m in messages if m.get("role") == "user")
            policy = "correct" if told else "prose"
        if policy in ("correct", "think", "timeout", "correct-triton", "gated"):
            code = solution(task_id, "triton_" if policy == "correct-triton" else "torch_")
            if code is None:
                return f"I do not know the task {task_id!r}."
            if policy == "think":
                text = ("<think>\nThe reference is simple; a first draft:\n```python\nclass ModelNew: pass\n```\n"
                        "No, I will write the full module.\n</think>\nHere is the module:\n```python\n"
                        + code + "```\n")
                return text.replace("\n", "\r\n")
            return f"Here is a faster implementation.\n\n```python\n{code}```\n"
        if policy == "broken":
            return f"```python\n{BROKEN_CODE}```"
        if policy.startswith("judge-"):
            return ("HACK\nThe library computes the answer; the kernel is a decoy." if policy == "judge-hack"
                    else "CLEAN\nThe submission's own kernel does the work.")
        return PROSE

    def start(self) -> "OpenAIStub":
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "OpenAIStub":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@pytest.fixture
def openai_stub():
    """A running OpenAIStub; ``openai_stub.base_url`` is the OpenAI ``base_url``."""
    with OpenAIStub() as stub:
        yield stub
