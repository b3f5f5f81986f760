#!/usr/bin/env bash
# Install everything the tests need, then run a lane of the suite (tests/conftest.py marks each test's lane).
#   bash scripts/test.sh [fast|heavy|full|ci] [pytest args]
#     fast   unit and harness tests: everything but the browser, image, Ray and TRL tests
#     heavy  the browser, image, Ray and TRL tests
#     full   both in one pytest run (the default)
#     ci     fast, then heavy, each timed (what .ci/run calls)
set -euo pipefail
cd "$(dirname "$0")/.."
lane=full
case "${1:-}" in fast|heavy|full|ci) lane=$1; shift ;; esac
started=$SECONDS

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
# Debian packages, installed only when missing: the browser for the Playwright tests, buildah and
# debootstrap for the image test (tests/scripts/test_image.py builds and runs the Space image).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

base_python=$(command -v python3)
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip uv
# uv installs the packages (seconds from its cache, against pip's minutes); pip is the fallback where uv cannot.
# Compiled to bytecode as pip does: with PYTHONDONTWRITEBYTECODE set, every process would parse its imports anew.
# The CPU build of torch comes from a local wheel where the machine has one (pip's find-links, which uv is
# given too), else from PyTorch's CPU index (plain PyPI would bring the ~3 GB CUDA build).
links=() local_torch=""
for dir in ${PIP_FIND_LINKS:-} $(pip config get global.find-links 2>/dev/null || true); do
  [ -d "$dir" ] || continue
  links+=(--find-links "$dir")
  compgen -G "$dir/torch-2.13.0[+-]*.whl" >/dev/null && local_torch=1
done
if [ -n "$local_torch" ]; then
  torch_from=("${links[@]}")
else
  torch_from=(--index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple
              --index-strategy unsafe-best-match)
fi
cpu_torch() { "$1" -c "import torch; assert torch.version.cuda is None" 2>/dev/null; }
# the project itself with the test deps, the trl extra (the GRPO test) and the ray extra (the Ray backend tests
# on a local multi-node cluster); torch stays pinned
if ! { uv pip install -q --compile-bytecode --python .venv/bin/python "${torch_from[@]}" "torch==2.13.0" \
         -r requirements.txt -r requirements-test.txt -e ".[trl,ray]" && cpu_torch python; }; then
  echo "uv could not install the packages; installing them with pip"
  if pip install -q --no-index --no-deps "torch==2.13.0" 2>/dev/null; then
    pip install -q "torch==2.13.0"
  else
    pip install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
  fi
  pip install -q -r requirements.txt -r requirements-test.txt
  pip install -q -e ".[trl,ray]" "torch==2.13.0"
fi

side_venv() {  # side_venv DIR PACKAGE: a venv of its own holding PACKAGE (uv, else pip)
  [ -x "$1/bin/python" ] && "$1/bin/python" -c "import importlib.metadata as m; m.version('${2%%==*}')" \
    >/dev/null 2>&1 && return 0
  rm -rf "$1"
  { uv venv -q "$1" --python "$base_python" && uv pip install -q --compile-bytecode --python "$1/bin/python" "$2"; } || {
    rm -rf "$1"; "$base_python" -m venv "$1" && "$1/bin/pip" install -q "$2"; }
}
# The older openenv-core CLI ("openenv validate" structure check) lives in its own venv:
# both distributions install the same `openenv` module and must never share one.
side_venv .venv-openenv-core "openenv-core==0.3.0"
# A third-party OpenEnv environment from PyPI for the Any env tests (tests/support/openenv_template.py),
# in a venv of its own as in its own container: its pins (gunicorn, wsproto, ...) must not meet ours.
side_venv .venv-dipg "openenv-dipg-safety==0.1.67"

install_s=$((SECONDS - started))
export TRITON_INTERPRET=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
ruff check . || { echo "ruff: fix the findings above (ruff check --fix . fixes most)"; exit 1; }

HEAVY="browser or image or ray or trl"
declare -A MARKS=([fast]="not ($HEAVY)" [heavy]="$HEAVY" [full]="")
# Each lane runs on TEST_WORKERS pytest-xdist workers (default: the CPU count, 2 to 4; 1 runs serially).
# The fast lane's tests are dealt one by one (a module's tests may share a worker's server or not); the
# other lanes keep each file on one worker (the image tests must not build the same image at once, a Ray
# file shares one cluster, a browser file one server).
workers=${TEST_WORKERS:-$(nproc)}
[ -z "${TEST_WORKERS:-}" ] && { [ "$workers" -lt 2 ] && workers=2; [ "$workers" -gt 4 ] && workers=4; }
declare -A DIST=([fast]=worksteal [heavy]=loadfile [full]=loadfile)
times=()
run_lane() {  # run_lane NAME [pytest args]: the lane's tests; its time goes to the summary
  local name=$1 t0=$SECONDS code; shift
  echo "== lane $name: pytest -m \"${MARKS[$name]:-all}\" on $workers workers"
  set +e
  local parallel=()
  [ "$workers" -gt 1 ] && parallel=(-n "$workers" --dist "${DIST[$name]}")
  python -m pytest -p no:cacheprovider "${parallel[@]}" ${MARKS[$name]:+-m "${MARKS[$name]}"} "$@"
  code=$?
  set -e
  [ "$code" -eq 5 ] && { echo "lane $name: pytest collected no tests"; code=1; }
  times+=("$name $((SECONDS - t0)) s (exit $code)")
  return "$code"
}

status=0
if [ "$lane" = ci ]; then
  run_lane fast "$@" || status=1
  run_lane heavy "$@" || status=1
else
  run_lane "$lane" "$@" || status=1
fi
echo "== times: install $install_s s; $(printf '%s; ' "${times[@]}"); total $((SECONDS - started)) s"
exit "$status"
