"""``GET /monitor`` and ``GET /monitor/episodes/{id}``: the environment's monitor over HTTP.

Off (404 naming the switch) unless ``KERNEL_ENV_MONITOR=1``. With ``KERNEL_ENV_MONITOR_TOKEN`` set,
each request must send the token as ``Authorization: Bearer <token>`` or ``X-Monitor-Token``
(headers only: a query string would land in access logs).
"""
from __future__ import annotations

import hmac
from typing import Optional

from fastapi import FastAPI, Header, HTTPException, Query

from environment import monitor
from environment.trajectory import configured_secrets, scrub


def check_access(authorization: Optional[str], x_monitor_token: Optional[str]) -> None:
    """Raise the HTTP error a request without access gets (404 when off, 401 on a missing/wrong token)."""
    if not monitor.enabled():
        raise HTTPException(404, f"the monitor is off: start the server with {monitor.ENABLE_VAR}=1 (it shows every "
                                 f"session's code; add {monitor.TOKEN_VAR}=<secret> to require a token)")
    expected = monitor.token()
    if expected is None:
        return
    given = x_monitor_token or ""
    if not given and authorization and authorization.lower().startswith("bearer "):
        given = authorization[7:].strip()
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(401, "the monitor needs its token: send 'Authorization: Bearer <token>' or "
                                 "'X-Monitor-Token: <token>' (the value of KERNEL_ENV_MONITOR_TOKEN on the server)")


def register(app: FastAPI) -> None:
    @app.get("/monitor", tags=["monitor"], summary="Recent episodes of every session, with summaries "
             "(reward histogram per task, success and hack rates, flags, evaluations per minute, harness errors)")
    def get_monitor(limit: int = Query(20, ge=0, le=1000), task: Optional[str] = None,
                    kind: str = Query("all", description="|".join(monitor.KINDS)), sample: bool = False,
                    seed: Optional[int] = None, authorization: Optional[str] = Header(None),
                    x_monitor_token: Optional[str] = Header(None)) -> dict:
        check_access(authorization, x_monitor_token)
        try:
            episodes = monitor.MONITOR.episodes(limit, task=task, kind=kind, sample=sample, seed=seed)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        out = monitor.MONITOR.summary(recent=0)
        out["recent"] = episodes
        return scrub(out, configured_secrets())

    @app.get("/monitor/review", tags=["monitor"],
             summary="Unlabelled steps to review: flagged disagreements and vetoes first, then a seeded sample")
    def get_review(limit: int = Query(20, ge=0, le=1000), seed: Optional[int] = None,
                   authorization: Optional[str] = Header(None), x_monitor_token: Optional[str] = Header(None)) -> dict:
        check_access(authorization, x_monitor_token)
        return {"steps": monitor.MONITOR.review(limit, seed=seed)}

    @app.get("/monitor/episodes/{episode_id}", tags=["monitor"],
             summary="One recent episode as an EpisodeRecord (the playground's export format)")
    def get_episode(episode_id: str, authorization: Optional[str] = Header(None),
                    x_monitor_token: Optional[str] = Header(None)) -> dict:
        check_access(authorization, x_monitor_token)
        record = monitor.MONITOR.episode(episode_id)
        if record is None:
            raise HTTPException(404, f"no episode {episode_id!r} in the monitor's buffer (it keeps the last "
                                     f"{monitor.MONITOR.capacity}; raise {monitor.CAPACITY_VAR} to keep more)")
        return scrub(record.model_dump(mode="json"), configured_secrets())
