"""The Space image: the root Dockerfile built with buildah and its command run as uid 1000
(scripts/image_check.sh), and the checks of scripts/image_probe.py that need no image."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "image_check.sh"
_spec = importlib.util.spec_from_file_location("image_probe", ROOT / "scripts" / "image_probe.py")
image_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(image_probe)

FAKE_TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"  # the shape of a Hugging Face token, not a real one


def _inspect(created_by: list[str], env: list[str] | None = None) -> dict:
    """The parts of `buildah inspect --type image` output the secret scan reads."""
    return {"History": [{"created_by": line} for line in created_by],
            "Docker": {"config": {"Env": env or ["PATH=/usr/local/bin:/usr/bin", "PORT=7860"], "Cmd": ["python"]}}}


# Lines as buildah records them for this project's Dockerfile.
CLEAN_HISTORY = [
    "/bin/sh -c #(nop) ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu",
    "/bin/sh -c #(nop) ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 ENABLE_WEB_INTERFACE=true PORT=7860",
    "|2 TORCH_INDEX=file:///mnt/simple TORCH_VERSION=2.13.0 /bin/sh -c pip install \"torch==${TORCH_VERSION}\" "
    "--index-url \"${TORCH_INDEX}\" && pip install -r /app/requirements.txt",
    "/bin/sh -c #(nop) HEALTHCHECK --interval=30s CMD curl -fsS http://localhost:7860/health || exit 1",
]


def test_secret_scan_passes_this_projects_build_history():
    assert image_probe.find_secrets(_inspect(CLEAN_HISTORY), env={}) == []


def test_secret_scan_names_a_token_passed_as_a_build_argument_without_printing_it():
    history = CLEAN_HISTORY + [f"|1 HF_TOKEN={FAKE_TOKEN} /bin/sh -c huggingface-cli download x"]
    found = image_probe.find_secrets(_inspect(history), env={})
    assert found == ["Hugging Face token in image.History[4].created_by",
                     "secret-named variable with a value in image.History[4].created_by"]
    assert not any(FAKE_TOKEN in item for item in found)


def test_secret_scan_finds_the_hosts_token_value_in_the_image_environment():
    value = "not-token-shaped-but-secret-42"
    found = image_probe.find_secrets(_inspect(CLEAN_HISTORY, env=["PATH=/usr/bin", f"X={value}"]),
                                     env={"HF_TOKEN": value})
    assert found == ["the value of $HF_TOKEN in image.Docker.config.Env[1]"]


def test_secret_scan_ignores_an_empty_token_variable():
    assert image_probe.find_secrets(_inspect(CLEAN_HISTORY, env=["HF_TOKEN=", "PORT=7860"]), env={}) == []


@pytest.mark.parametrize("setting, value, message", [
    ("IMAGE_CHECK_RESET_GATE_S", "soon",
     "IMAGE_CHECK_RESET_GATE_S must be a whole number of seconds (0 = report only), got 'soon'"),
    ("TORCH_INDEX", "download.pytorch.org/whl/cpu",
     "TORCH_INDEX must be an http(s) URL of a PEP 503 index (e.g. https://download.pytorch.org/whl/cpu), "
     "got 'download.pytorch.org/whl/cpu'"),
    ("IMAGE_CHECK_NO_CACHE", "yes", "IMAGE_CHECK_NO_CACHE must be 1 (build every step again) or 0, got 'yes'"),
])
def test_image_check_refuses_a_bad_setting_before_doing_anything(setting, value, message):
    out = subprocess.run(["bash", str(SCRIPT)], env={**os.environ, setting: value}, capture_output=True, text=True,
                         timeout=60)
    assert (out.returncode, out.stderr.strip()) == (2, f"image check: {message}")
    assert out.stdout == ""


def _probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "image_probe.py"), *args], capture_output=True,
                          text=True, timeout=120)


def test_gallery_probe_passes_this_tree_and_fails_a_tree_that_lost_the_attack_contract(tmp_path):
    """The probe the image check runs inside the image, here on the source tree and on a copy of the
    app as an image would hold it without tests/redteam/expected.py (a .dockerignore slip)."""
    count = int(_probe("attack-count", str(ROOT)).stdout)
    assert count == len(list((ROOT / "tests" / "redteam" / "attacks").glob("a*.py"))) > 100
    out = _probe("gallery", str(ROOT), str(count))
    assert out.returncode == 0 and f"PASS the attack gallery lists all {count} attacks: {count} listed" in out.stdout
    app = tmp_path / "app"
    shutil.copytree(ROOT / "ui", app / "ui")
    shutil.copytree(ROOT / "tests" / "redteam" / "attacks", app / "tests" / "redteam" / "attacks")
    out = _probe("gallery", str(app), str(count))
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"PASS the image holds all {count} red-team attack files" in out.stdout
    assert f"FAIL the attack gallery lists all {count} attacks: 0 listed" in out.stdout


def _needs_buildah_as_root() -> None:
    if not shutil.which("buildah"):
        pytest.skip("buildah is not installed (scripts/test.sh installs it: apt-get install buildah debootstrap)")
    if os.geteuid() != 0:
        pytest.skip("the image check runs buildah as root (--isolation chroot); run the suite as root")


def _run_check(repo: Path, **env: str) -> subprocess.CompletedProcess:
    # The 30 s reset gate is reported by the script, not asserted here: tests assert no wall-clock times.
    return subprocess.run(["bash", str(repo / "scripts" / "image_check.sh")], capture_output=True, text=True,
                          env={**os.environ, "IMAGE_CHECK_RESET_GATE_S": "0", **env}, timeout=2900)


@pytest.mark.image
@pytest.mark.timeout(3000)
def test_the_space_image_builds_and_serves_every_check_as_uid_1000():
    _needs_buildah_as_root()
    out = _run_check(ROOT)
    log = out.stdout + out.stderr
    (ROOT / "artifacts").mkdir(exist_ok=True)  # the figures (build time, image size, reset time) for CI's log
    (ROOT / "artifacts" / "image-check.log").write_text(log)
    assert out.returncode == 0, log[-6000:]
    passed = [line for line in out.stdout.splitlines() if line.startswith("PASS ")]
    for check in ("the Dockerfile builds", "no token in the image's history", "the image runs as USER 1000",
                  "POST /reset {} answered 200", "GET /health is healthy", "GET /web/ serves the playground page",
                  "GET /sandbox reports every sandbox layer active",
                  "the container's port is not reachable from the host's network",
                  "the image's HEALTHCHECK passes", "the shipped Triton solution of gelu_bias evaluates correct",
                  "no sandbox layer is degraded in the evaluation", "none of them is writable by uid 1000",
                  "the server process runs as uid 1000", "the image holds all", "the attack gallery lists all",
                  "each gallery entry has its class", "the server stopped within 10 s of SIGTERM",
                  "the server log shows a clean start and shutdown"):
        assert any(line.startswith(f"PASS {check}") for line in passed), f"missing: PASS {check}\n{log[-6000:]}"
    assert not [line for line in out.stdout.splitlines() if line.startswith("FAIL")]
    assert out.stdout.rstrip().endswith("image check: PASS")


@pytest.mark.image
@pytest.mark.timeout(3000)
def test_the_image_check_fails_an_image_with_a_writable_app_and_a_token_in_its_history(tmp_path):
    """The same Dockerfile plus one step that a careless edit could add: the check must name both faults."""
    _needs_buildah_as_root()
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True, timeout=120)
    for path in ("Dockerfile", "scripts/image_check.sh", "scripts/image_probe.py", ".dockerignore"):
        shutil.copy(ROOT / path, repo / path)  # the working tree's version when running before a commit
    dockerfile = (repo / "Dockerfile").read_text()
    assert "\nUSER 1000\n" in dockerfile
    (repo / "Dockerfile").write_text(dockerfile.replace("\nUSER 1000\n", (
        f"\nARG HF_TOKEN={FAKE_TOKEN}\nRUN chmod o+w /app/environment/reward.py && test -n \"$HF_TOKEN\"\nUSER 1000\n")))
    tag = "localhost/kernel-playground:image-check-faulty"
    try:
        out = _run_check(repo, IMAGE_CHECK_TAG=tag)
    finally:
        subprocess.run(["buildah", "rmi", tag], capture_output=True, timeout=300)
    failed = [line for line in out.stdout.splitlines() if line.startswith("FAIL ")]
    assert out.returncode == 1, out.stdout[-4000:] + out.stderr[-2000:]
    assert [line.split(":")[0] for line in failed] == [
        "FAIL no token in the image's history, config or annotations",
        "FAIL none of them is writable by uid 1000"], out.stdout[-4000:]
    assert "Hugging Face token in image.History" in failed[0] and FAKE_TOKEN not in out.stdout + out.stderr
    assert failed[1].endswith(": /app/environment/reward.py")
    assert out.stdout.rstrip().endswith("image check: FAIL (2 failed group(s))")
