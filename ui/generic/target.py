"""Which OpenEnv servers the playground may reach, and what they say about themselves.

Private, loopback and link-local addresses are refused unless the operator allows them with
``KERNEL_ENV_ALLOW_PRIVATE_ENVS=1``. The default depends on where the playground runs: on a
Hugging Face Space (``SPACE_ID`` is set) they are refused, since a visitor could otherwise make the
Space probe its own network; on a local run (no ``SPACE_ID``) they are allowed, since the person at
the keyboard already reaches them. ``KERNEL_ENV_ALLOW_PRIVATE_ENVS=0`` refuses them locally too.
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from environment.config import setting

ALLOW_VAR = "KERNEL_ENV_ALLOW_PRIVATE_ENVS"
TIMEOUT_S = float(setting("KERNEL_ENV_GENERIC_TIMEOUT_S"))


class TargetError(Exception):
    """A server that cannot be used, with the cause and the fix in the message."""


def private_allowed() -> bool:
    configured = setting(ALLOW_VAR).strip().lower()
    if configured in ("1", "true", "yes"):
        return True
    if configured in ("0", "false", "no"):
        return False
    return not setting("SPACE_ID")


def normalize(url: str) -> str:
    """``url`` as ``scheme://host[:port][/path]`` without a trailing slash, or a TargetError."""
    url = (url or "").strip()
    if not url:
        raise TargetError("type the URL of an OpenEnv server, e.g. http://127.0.0.1:8000 or "
                          "https://owner-name.hf.space")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise TargetError(f"{parts.scheme}:// is not supported: use the server's http:// or https:// URL "
                          "(the playground opens its /ws itself)")
    if not parts.hostname:
        raise TargetError(f"{url!r} names no host: type e.g. http://127.0.0.1:8000")
    if parts.username or parts.password:
        raise TargetError("remove the user name and password from the URL: the playground sends no credentials")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def check_address(url: str) -> None:
    """Refuse private/loopback targets unless allowed (every address the host resolves to is checked)."""
    host = urlsplit(url).hostname or ""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as e:
        raise TargetError(f"cannot resolve {host!r} ({e.strerror}): check the host name") from None
    if private_allowed():
        return
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global:
            raise TargetError(
                f"{host} is a private or loopback address ({address}), which this playground refuses: "
                f"connect to a public server (e.g. a Space's https://owner-name.hf.space URL), or, as the "
                f"operator, set {ALLOW_VAR}=1 to allow private addresses")


@dataclass
class Target:
    """One OpenEnv server: its URL and what /metadata and /schema said."""
    url: str
    metadata: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or urlsplit(self.url).netloc)

    @property
    def action_schema(self) -> dict[str, Any]:
        return self.schema.get("action") or {}

    @property
    def ws_url(self) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(("wss" if parts.scheme == "https" else "ws", parts.netloc, parts.path + "/ws", "", ""))


def _get_json(client: httpx.Client, url: str, path: str) -> Any:
    try:
        response = client.get(url + path)
    except httpx.TimeoutException:
        raise TargetError(f"{url}{path} did not answer within {TIMEOUT_S:g} s: is the server up and reachable "
                          "from this playground?") from None
    except httpx.HTTPError as e:
        raise TargetError(f"cannot reach {url}{path} ({type(e).__name__}: {e}): check the URL and that the "
                          "server is running") from None
    if response.status_code != 200:
        raise TargetError(f"{url}{path} answered HTTP {response.status_code}: is this an OpenEnv server "
                          "(openenv's create_app serves /health, /metadata and /schema)?")
    try:
        return response.json()
    except ValueError:
        raise TargetError(f"{url}{path} did not answer JSON: is this an OpenEnv server?") from None


def connect(url: str) -> Target:
    """Check ``url`` (address policy, then /health) and read its /metadata and /schema."""
    url = normalize(url)
    check_address(url)
    with httpx.Client(timeout=TIMEOUT_S, follow_redirects=False) as client:
        health = _get_json(client, url, "/health")
        if isinstance(health, dict) and str(health.get("status", "healthy")).lower() not in ("healthy", "ok"):
            raise TargetError(f"{url}/health says {health.get('status')!r}: wait until the server is healthy")
        schema = _get_json(client, url, "/schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("action"), dict):
            raise TargetError(f"{url}/schema has no action schema: is this an OpenEnv server (openenv >= 0.2)?")
        try:
            metadata = _get_json(client, url, "/metadata")
        except TargetError:
            metadata = {}  # optional: an older server may not serve it
    return Target(url=url, metadata=metadata if isinstance(metadata, dict) else {}, schema=schema)
