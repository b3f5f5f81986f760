"""Bad API input against the real server on a loopback port: Schemathesis over /openapi.json (no
5xx), and malformed WebSocket frames, each answered by an error frame while the connection (or at
least the server) stays usable.
"""
from __future__ import annotations

import json
import os
import urllib.request

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from websockets.sync.client import connect

from environment.local_server import LocalServer

pytestmark = pytest.mark.slow
EXAMPLES = int(os.environ.get("KERNEL_ENV_FUZZ_EXAMPLES", "12"))
HONEST = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
          "    def forward(self, x, bias):\n        return nn.functional.gelu(x + bias)\n")


@pytest.fixture(scope="module")
def server():
    saved = os.environ.get("KERNEL_ENV_TRIALS")
    os.environ["KERNEL_ENV_TRIALS"] = "2"
    try:
        with LocalServer(start_timeout_s=180) as srv:
            yield srv.url
    finally:
        os.environ.pop("KERNEL_ENV_TRIALS", None) if saved is None else os.environ.__setitem__("KERNEL_ENV_TRIALS", saved)


def operations(server: str):
    schema = schemathesis.openapi.from_url(server + "/openapi.json")
    return [result.ok() for result in schema.get_all_operations()]


def test_no_http_route_answers_5xx(server):
    """Every operation of the published schema, EXAMPLES generated requests each (positive and negative)."""
    failures, tried = [], []
    for op in operations(server):
        tried.append(op.label)

        @given(case=op.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def fuzz(case):
            case.call_and_validate(checks=[not_a_server_error], timeout=120)

        try:
            fuzz()
        except Exception as exc:  # collect every operation's failure, not just the first
            failures.append(f"{op.label}: {str(exc)[:800]}")
    assert {"POST /reset", "POST /step", "GET /health", "GET /tasks"} <= set(tried), tried
    assert not failures, "\n\n".join(failures)


# ---- WebSocket ------------------------------------------------------------------------------------

def ws_url(server: str) -> str:
    return server.replace("http://", "ws://") + "/ws"


def ask(ws, message) -> dict:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=180))


def assert_error(reply: dict, code: str, text: str = "") -> None:
    assert reply.get("type") == "error", reply
    assert reply["data"]["code"] == code, reply
    assert text in json.dumps(reply["data"]), reply


def assert_usable(ws) -> None:
    reply = ask(ws, {"type": "reset", "data": {"task_id": "gelu_bias", "seed": 1, "max_turns": 2}})
    assert reply["type"] == "observation" and reply["data"]["observation"]["task_id"] == "gelu_bias", reply


BAD_FRAMES = {
    # name: (frame, error code, text in the error)
    "not_json": ("{this is not json", "INVALID_JSON", "Invalid JSON"),
    "empty_text": ("", "INVALID_JSON", "Invalid JSON"),
    "unknown_type": ({"type": "explode", "data": {}}, "UNKNOWN_TYPE", "explode"),
    "missing_type": ({"data": {}}, "UNKNOWN_TYPE", "Unknown message type"),
    "type_not_a_string": ({"type": 7}, "UNKNOWN_TYPE", "Unknown message type"),
    "step_before_reset": ({"type": "step", "data": {"code": HONEST}}, "EXECUTION_ERROR", "call reset() before step()"),
    "step_code_wrong_type": ({"type": "step", "data": {"code": 12345}}, "VALIDATION_ERROR", "Invalid message"),
    "step_code_missing": ({"type": "step", "data": {}}, "VALIDATION_ERROR", "Invalid message"),
    "step_data_not_object": ({"type": "step", "data": "print(1)"}, "VALIDATION_ERROR", "Invalid message"),
    "step_unknown_field": ({"type": "step", "data": {"code": HONEST, "shell": "rm -rf /"}}, "VALIDATION_ERROR",
                           "Invalid message"),
    "reset_unknown_task": ({"type": "reset", "data": {"task_id": "no_such_task"}}, "EXECUTION_ERROR",
                           "unknown task_id 'no_such_task'"),
    "reset_negative_seed": ({"type": "reset", "data": {"seed": -5}}, "EXECUTION_ERROR",
                            "seed must be a non-negative integer"),
    "reset_seed_wrong_type": ({"type": "reset", "data": {"seed": "zero"}}, "EXECUTION_ERROR",
                              "seed must be a non-negative integer"),
    "reset_max_turns_zero": ({"type": "reset", "data": {"max_turns": 0}}, "EXECUTION_ERROR",
                             "max_turns must be an integer from 1 to 50"),
    "reset_unknown_difficulty": ({"type": "reset", "data": {"difficulty": "nightmare"}}, "EXECUTION_ERROR",
                                 "unknown difficulty 'nightmare'"),
    "reset_data_not_object": ({"type": "reset", "data": [1, 2]}, "VALIDATION_ERROR", "Invalid message"),
}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_malformed_websocket_frame_gets_an_error_frame_and_the_connection_stays_usable(server, name):
    frame, code, text = BAD_FRAMES[name]
    with connect(ws_url(server), open_timeout=30, max_size=2**25) as ws:
        assert_error(ask(ws, frame), code, text)
        assert_usable(ws)


def test_non_object_json_gets_an_error_frame_and_the_server_keeps_serving(server):
    """OpenEnv reads message_dict.get('type') outside its per-message guard: a JSON array or number ends the
    session with SESSION_ERROR (the connection closes); the server itself is unaffected."""
    for frame in ("[1, 2, 3]", "42", '"reset"', "null"):
        with connect(ws_url(server), open_timeout=30) as ws:
            assert_error(ask(ws, frame), "SESSION_ERROR")
    with connect(ws_url(server), open_timeout=30) as ws:
        assert_usable(ws)


def test_huge_code_is_refused_on_the_wire_with_the_limit_named_and_no_turn_spent(server):
    """KernelAction.code carries max_length: a source over the limit never reaches the harness (no reward,
    no turn), and the error frame names the field and the limit."""
    with connect(ws_url(server), open_timeout=30, max_size=2**25) as ws:
        assert_usable(ws)
        for size in (1 << 20, 4 << 20):
            huge = HONEST + "#" + "x" * size + "\n"
            reply = ask(ws, {"type": "step", "data": {"code": huge}})
            assert_error(reply, "VALIDATION_ERROR", "Invalid message")
            (error,) = reply["data"]["errors"]
            assert error["loc"][-1] == "code" and "at most 262144 characters" in error["msg"], error["msg"]
        reply = ask(ws, {"type": "step", "data": {"code": HONEST}})
        obs = reply["data"]["observation"]
        assert obs["correct"] is True and obs["turn"] == 1, obs["feedback"][:300]


def test_a_frame_over_the_websocket_size_limit_closes_only_that_connection(server):
    with connect(ws_url(server), open_timeout=30, max_size=2**26) as ws:
        ws.send(json.dumps({"type": "step", "data": {"code": "x" * (40 << 20)}}))
        with pytest.raises(Exception):
            ws.recv(timeout=60)  # closed with 1009 (message too big)
    with connect(ws_url(server), open_timeout=30) as ws:
        assert_usable(ws)
    with urllib.request.urlopen(server + "/health", timeout=10) as r:
        assert r.status == 200
