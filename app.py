"""The Space: OpenEnv's FastAPI app for kernel_env, plus the playground at /web when
ENABLE_WEB_INTERFACE=true (API and playground on one port)."""
from __future__ import annotations

import argparse

from fastapi import HTTPException
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.types import ConcurrencyConfig

from environment import curriculum
from environment.config import ServerConfig, setting
from environment.env import KernelEnvironment
from environment.evaluation import harness
from environment.evaluation.transport.sandbox import PR_SET_DUMPABLE, prctl
from environment.models import KernelAction, KernelObservation, KernelState
from environment.tasks.registry import listing
from server import shutdown
from server.monitor import register as register_monitor

# A same-uid process could otherwise read this server's memory and environment (tokens).
prctl(PR_SET_DUMPABLE, 0)
_config = ServerConfig()


def _gradio_builder():
    from ui.app import build_playground
    from ui.autoplay import server_stopping
    from ui.common import SESSIONS
    shutdown.on_stop(lambda: server_stopping(SESSIONS))  # model jobs end interrupted, never with a failed step
    return build_playground


app = create_app(
    KernelEnvironment, KernelAction, KernelObservation, env_name="kernel_env",
    concurrency_config=ConcurrencyConfig(max_concurrent_envs=_config.max_sessions,
                                         session_timeout=_config.session_timeout_s),
    gradio_builder=_gradio_builder() if setting("ENABLE_WEB_INTERFACE").lower() in ("1", "true", "yes")
    else None,
    custom_tab_name="Kernel Playground", custom_tab_primary=True, show_default_tab=False,
    title_override="Kernel Playground", state_cls=KernelState,
)
register_monitor(app)  # GET /monitor: off unless KERNEL_ENV_MONITOR=1
shutdown.install(app)  # SIGTERM: stop promptly (see server/shutdown.py)


@app.get("/tasks", tags=["kernel_env"], summary="Every task with id, difficulty, title and whether it is graded")
def tasks() -> list[dict]:
    # then generated tasks (one per family and level), then problems that could not be loaded
    # ("available": false, with the reason)
    return listing()


@app.get("/curricula/{name}", tags=["kernel_env"], summary="A curriculum's level, window, promotions and history")
def curriculum_state(name: str) -> dict:
    state = curriculum.snapshot(name)
    if state is None:
        raise HTTPException(status_code=404, detail=f"no curriculum named {name!r} yet: one is created by the first "
                                                    f"reset(curriculum={name!r})")
    return state


@app.get("/sandbox", tags=["kernel_env"], summary="Backend and the sandbox layers this host offers")
def sandbox() -> dict:
    try:
        return harness.pool().describe()
    except Exception as exc:  # the backend (a Ray cluster) unreachable: the environment's state, said as such
        raise HTTPException(status_code=503, detail=f"the evaluation backend is unavailable ({type(exc).__name__}: "
                                                    f"{exc}); check KERNEL_ENV_RAY_ADDRESS and the cluster") from None


@app.on_event("startup")
def _warm_pool() -> None:
    """Start a zygote in the background so the first step does not pay the interpreter start."""
    import threading
    threading.Thread(target=harness.pool().describe, daemon=True).start()
    threading.Thread(target=listing, daemon=True).start()  # load KERNEL_ENV_EXTRA_TASKS before the first /tasks


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve kernel_env (API and, with ENABLE_WEB_INTERFACE=true, /web).")
    parser.add_argument("--host", default=setting("HOST"))
    parser.add_argument("--port", type=int, default=_config.port)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, ws_max_size=16 * 2**20)


if __name__ == "__main__":
    main()
