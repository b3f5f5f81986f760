"""Checks of the Space image that scripts/image_check.sh runs; standard library only, so the host side
runs with any python3 and the in-image side with the image's own interpreter.

    python3 scripts/image_probe.py secrets INSPECT_JSON      # no token in the image's history or config
    python3 scripts/image_probe.py config INSPECT_JSON       # user, PORT, HEALTHCHECK, CMD (one per line)
    python3 scripts/image_probe.py serve BASE_URL T0 GATE_S  # reset within GATE_S of T0, /health, /web/, /sandbox
    python /app/scripts/image_probe.py episode BASE_URL      # in the image, as uid 1000: one evaluation
    python /app/scripts/image_probe.py app-tree /app         # in the image, as uid 1000: the app is read-only
    python /app/scripts/image_probe.py gallery /app N        # in the image: the attack gallery lists all N attacks
    python3 scripts/image_probe.py pid-of PID CMD...         # the descendant of PID that runs CMD
    python3 scripts/image_probe.py attack-count .            # the number of red-team attack files in a tree

Each prints one ``PASS``/``FAIL`` line per check and exits 1 if any failed.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

# Shapes of secrets; a value is never printed, only where it was found and which kind it is.
SECRET_PATTERNS = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "OpenAI-style key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    "secret-named variable with a value": re.compile(
        r"\b[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|APIKEY)[A-Za-z0-9_]*=(?!\s|$|\"\"|'')\S+", re.I),
}
# Host variables whose values must not appear anywhere in the image's metadata.
SECRET_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "API_KEY", "OPENAI_API_KEY")
SANDBOX_LAYERS = ("landlock", "seccomp", "rlimits", "audit_hook")
SOLUTION = "environment/tasks/problems/gelu_bias/solutions/correct/triton_fused.py"

failures: list[str] = []


def report(ok: bool, what: str, detail: str = "") -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(what)
    return ok


# -- secrets -------------------------------------------------------------------------------------
def _strings(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, f"{where}[{i}]")


def find_secrets(inspect: dict, env: dict[str, str]) -> list[str]:
    """Where a token-shaped string, or the value of one of the host's secret variables, occurs in
    ``buildah inspect --type image`` output: history (RUN lines carry their build arguments), config
    (Env, Labels, Cmd) and annotations. Returns ``"<kind> in <path>"`` items, never the value."""
    found = []
    host_values = {name: env[name] for name in SECRET_ENV if len(env.get(name, "")) >= 8}
    sections = {k: inspect.get(k) for k in ("History", "Docker", "OCIv1", "ImageAnnotations", "Config")}
    for where, text in _strings(sections, "image"):
        for kind, pattern in SECRET_PATTERNS.items():
            if pattern.search(text):
                found.append(f"{kind} in {where}")
        for name, value in host_values.items():
            if value in text:
                found.append(f"the value of ${name} in {where}")
    return sorted(set(found))


def cmd_secrets(path: str) -> None:
    inspect = json.loads(Path(path).read_text())
    history = inspect.get("History") or (inspect.get("OCIv1") or {}).get("history") or []
    if not report(bool(history), "image history is present to scan", f"{len(history)} entries"):
        return
    found = find_secrets(inspect, dict(os.environ))
    report(not found, "no token in the image's history, config or annotations", "; ".join(found))


def cmd_config(path: str) -> None:
    """The parts of the image's config the run needs, one per line: user, PORT, the HEALTHCHECK's
    shell command, then each argument of CMD."""
    config = json.loads(Path(path).read_text())["Docker"]["config"]
    env = dict(item.split("=", 1) for item in config.get("Env") or [])
    test = (config.get("Healthcheck") or {}).get("Test") or []
    print(config.get("User", ""), env.get("PORT", ""), test[1] if test[:1] == ["CMD-SHELL"] else "",
          *(config.get("Cmd") or []), sep="\n")


# -- HTTP checks from outside the container ------------------------------------------------------
def http(method: str, url: str, body: bytes | None = None, timeout: float = 10.0) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def cmd_serve(base: str, started_at: float, gate_s: float, wait_s: float = 180.0) -> None:
    """Poll POST /reset {} from the moment the container started until it answers 200 (bounded)."""
    status, elapsed, last = 0, 0.0, "no answer yet"
    while elapsed < wait_s:
        try:
            status, body = http("POST", f"{base}/reset", b"{}", timeout=5)
            last = f"HTTP {status}: {body[:200]!r}"
        except (OSError, urllib.error.URLError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        elapsed = time.time() - started_at
        if status == 200:
            break
        time.sleep(0.25)
    if status != 200:
        report(False, f"POST /reset {{}} answers 200 within {wait_s:.0f} s of the container's start", last)
        return
    if gate_s > 0:
        report(elapsed <= gate_s, f"POST /reset {{}} answered 200 {elapsed:.1f} s after the container started "
               f"(gate {gate_s:.0f} s)")
    else:
        report(True, f"POST /reset {{}} answered 200 {elapsed:.1f} s after the container started (gate not enforced)")

    status, body = http("GET", f"{base}/health")
    report(status == 200 and json.loads(body or b"{}").get("status") == "healthy", "GET /health is healthy",
           f"HTTP {status} {body[:200]!r}")
    status, body = http("GET", f"{base}/web/", timeout=30)
    report(status == 200 and b"gradio" in body.lower(), "GET /web/ serves the playground page",
           f"HTTP {status}, {len(body)} bytes")
    status, body = http("GET", f"{base}/sandbox", timeout=120)  # waits for the first zygote's start-up
    info = json.loads(body) if status == 200 else {}
    layers = info.get("layers", {})
    missing = [name for name in SANDBOX_LAYERS if not layers.get(name)]
    report(status == 200 and not missing and layers.get("landlock_abi", 0) >= 1,
           "GET /sandbox reports every sandbox layer active",
           f"backend={info.get('backend')} layers={json.dumps(layers)}" + (f"; not active: {missing}" if missing else ""))


# -- inside the image ----------------------------------------------------------------------------
def cmd_episode(base: str) -> None:
    """A WebSocket episode with the shipped correct Triton solution of gelu_bias, through the
    project's own client, as the image's user."""
    sys.path.insert(0, "/app")
    from environment.client import KernelEnv
    from environment.models import KernelAction

    code = Path("/app", SOLUTION).read_text()
    with KernelEnv(base_url=base).sync() as env:
        obs = env.reset(task_id="gelu_bias", seed=0).observation
        report(obs.task_id == "gelu_bias" and obs.turn == 0, "WebSocket reset starts a gelu_bias episode")
        obs = env.step(KernelAction(code=code)).observation
    degraded = [f for f in obs.flags if f.startswith("sandbox_degraded")]
    report(bool(obs.correct) and obs.trials_passed == obs.trials_total > 0,
           "the shipped Triton solution of gelu_bias evaluates correct",
           f"trials {obs.trials_passed}/{obs.trials_total}, error={obs.error!r}")
    report(obs.speedup_kind == "modeled" and obs.score >= 0.5, "it gets a modeled speedup and a correct score",
           f"speedup={obs.speedup} ({obs.speedup_kind}), score={obs.score:.3f}, flags={obs.flags}")
    report(not degraded, "no sandbox layer is degraded in the evaluation", ", ".join(degraded))


def cmd_app_tree(root: str) -> None:
    """Every file and folder of the application belongs to root and is not writable by this uid."""
    uid = os.getuid()
    report(uid != 0, "the check runs as a non-root uid", f"uid {uid}")
    not_root, writable, count = [], [], 0
    for dirpath, dirnames, filenames in os.walk(root):  # every folder is visited once as dirpath
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in [""] + links + filenames:
            path = os.path.join(dirpath, name) if name else dirpath
            count += 1
            st = os.lstat(path)
            if st.st_uid != 0:
                not_root.append(path)
            if os.access(path, os.W_OK) and not os.path.islink(path):
                writable.append(path)
    report(count > 50 and not not_root, f"all {count} entries under {root} are owned by root", ", ".join(not_root[:5]))
    report(not writable, f"none of them is writable by uid {uid}", ", ".join(writable[:5]))
    for target in (os.path.join(root, "image_probe_was_here"), os.path.join(root, "app.py")):
        try:
            with open(target, "a"):
                pass
            report(False, f"uid {uid} cannot write {target}", "the write succeeded")
        except PermissionError:
            report(True, f"uid {uid} cannot write {target}")


def attack_files(root: str) -> list[str]:
    """The red-team attack files of the tree at ``root`` (what the playground's gallery shows)."""
    folder = Path(root, "tests", "redteam", "attacks")
    return sorted(p.name for p in folder.glob("a*.py")) if folder.is_dir() else []


def cmd_gallery(root: str, expected: int) -> None:
    """The playground's attack gallery, opened as the page opens it: every one of the ``expected``
    attacks of the source tree (counted on the host) is listed, with its class, what it tries, the
    layer that stops it and its code."""
    sys.path.insert(0, root)
    from ui import gallery

    files = attack_files(root)
    report(len(files) == expected > 0, f"the image holds all {expected} red-team attack files of the tree",
           f"{len(files)} under {root}/tests/redteam/attacks")
    listed = gallery.attacks()
    names = sorted(a.file for a in listed)
    missing = sorted(set(files) - set(names))
    report(len(listed) == expected and not missing, f"the attack gallery lists all {expected} attacks",
           f"{len(listed)} listed" + (f"; not listed: {', '.join(missing[:5])}" if missing else ""))
    bare = [a.name for a in listed if not (a.tries and a.group != "other" and a.stopped_by and a.code().strip())]
    report(bool(listed) and not bare, "each gallery entry has its class, what it tries, its layer and its code",
           ", ".join(bare[:5]))


def pid_of(root: int, cmd: list[str]) -> int:
    """The first descendant of ``root`` (breadth first) running ``cmd`` (the executable's base name
    and the same arguments), so a signal reaches the command itself and not a launcher around it."""
    queue = [root]
    while queue:
        pid = queue.pop(0)
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                        for c in (t / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if argv and os.path.basename(argv[0]) == os.path.basename(cmd[0]) and argv[1:] == cmd[1:]:
            return pid
        queue.extend(children)
    return 0


def main(argv: list[str]) -> int:
    usage = __doc__.split("\n\n")[1]
    if len(argv) < 2:
        print(f"usage:\n{usage}", file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "secrets" and len(args) == 1:
        cmd_secrets(args[0])
    elif cmd == "config" and len(args) == 1:
        cmd_config(args[0])
    elif cmd == "serve" and len(args) == 3:
        cmd_serve(args[0], float(args[1]), float(args[2]))
    elif cmd == "pid-of" and len(args) >= 2:
        print(pid_of(int(args[0]), args[1:]))
    elif cmd == "episode" and len(args) == 1:
        cmd_episode(args[0])
    elif cmd == "app-tree" and len(args) == 1:
        cmd_app_tree(args[0])
    elif cmd == "gallery" and len(args) == 2 and args[1].isdigit():
        cmd_gallery(args[0], int(args[1]))
    elif cmd == "attack-count" and len(args) == 1:
        print(len(attack_files(args[0])))
    else:
        print(f"unknown command or wrong arguments: {' '.join(argv)}\nusage:\n{usage}", file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
