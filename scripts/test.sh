#!/usr/bin/env bash
# Install everything the tests need and run the whole suite (what .ci/run calls).
#   bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
# Debian packages, installed only when missing: the browser for the Playwright tests, buildah and
# debootstrap for the image test (tests/test_image.py builds and runs the Space image).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip
# The CPU build of torch: from a local wheel where the machine has one (pip's find-links), else from
# PyTorch's CPU index (plain PyPI would bring the ~3 GB CUDA build).
pip install -q --no-index "torch==2.13.0" 2>/dev/null \
  || pip install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
pip install -q -r requirements.txt -r requirements-test.txt
# the project itself, with the trl extra (the GRPO test) and the ray extra (the Ray backend tests on a
# local multi-node cluster); torch stays pinned
pip install -q -e ".[trl,ray]" "torch==2.13.0"

# The older openenv-core CLI ("openenv validate" structure check) lives in its own venv:
# both distributions install the same `openenv` module and must never share one.
if [ ! -x .venv-openenv-core/bin/openenv ]; then
  python3 -m venv .venv-openenv-core
  .venv-openenv-core/bin/pip install -q "openenv-core==0.3.0"
fi

export TRITON_INTERPRET=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
ruff check . || { echo "ruff: fix the findings above (ruff check --fix . fixes most)"; exit 1; }
set +e
python -m pytest -p no:cacheprovider "$@"
code=$?
set -e
[ "$code" -eq 5 ] && { echo "pytest collected no tests"; exit 1; }
exit "$code"
