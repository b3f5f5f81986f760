#!/usr/bin/env bash
# Build the Space image from the root Dockerfile with buildah (no Docker engine needed), run its
# command as uid 1000 and check it the way Hugging Face and the judges use it:
#   sudo bash scripts/image_check.sh
# Needs root, buildah and debootstrap (apt-get install buildah debootstrap). No container registry is
# needed: when python:3.11-slim is not in buildah's storage, a stand-in is made from Debian bookworm
# (which ships Python 3.11) and cached there under that name. The Dockerfile is built unchanged; only
# its TORCH_INDEX build argument changes when download.pytorch.org is out of reach: then the CPU wheel
# of torch that the host's pip resolves (the Dockerfile's TORCH_VERSION) is served to the build from
# a bind-mounted folder. The container gets its own network namespace: it listens on its own
# loopback only, nothing is exposed on the host, and its port cannot collide with anything there.
#
# Settings (environment):
#   TORCH_INDEX=URL           torch index for the build (default: the Dockerfile's, when reachable)
#   IMAGE_CHECK_TAG=NAME      image name (default localhost/kernel-playground:image-check)
#   IMAGE_CHECK_NO_CACHE=1    build every Dockerfile step again (the stand-in base stays cached)
#   IMAGE_CHECK_RESET_GATE_S  seconds from start within which POST /reset {} must answer (default 30;
#                             0 reports the time without enforcing it)
#   DEBIAN_MIRROR=URL         mirror for the stand-in base (default http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${IMAGE_CHECK_TAG:-localhost/kernel-playground:image-check}
GATE_S=${IMAGE_CHECK_RESET_GATE_S:-30}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${IMAGE_CHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kernel-playground/image-check}
STANDIN_LABEL=org.kernel-playground.standin
STANDIN_VERSION=1   # bump when the stand-in's recipe changes, so cached ones are rebuilt
ISO=(--isolation chroot)

die() { printf 'image check: %s\n' "$*" >&2; exit 2; }
step() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$1" "$2"; }

# -- inputs and tools: every refusal names the cause and the fix -----------------------------------
# Settings first: a typo is reported at once, whatever the host lacks.
[[ "$GATE_S" =~ ^[0-9]+$ ]] || die "IMAGE_CHECK_RESET_GATE_S must be a whole number of seconds (0 = report only), got '$GATE_S'"
if [ -n "${TORCH_INDEX:-}" ] && ! [[ "$TORCH_INDEX" =~ ^https?://[^[:space:]]+$ ]]; then
  die "TORCH_INDEX must be an http(s) URL of a PEP 503 index (e.g. https://download.pytorch.org/whl/cpu), got '$TORCH_INDEX'"
fi
[[ "${IMAGE_CHECK_NO_CACHE:-0}" =~ ^[01]$ ]] || die "IMAGE_CHECK_NO_CACHE must be 1 (build every step again) or 0, got '$IMAGE_CHECK_NO_CACHE'"
[[ "$MIRROR" =~ ^https?://[^[:space:]]+$ ]] || die "DEBIAN_MIRROR must be an http(s) URL of a Debian mirror, got '$MIRROR'"
[ "$(id -u)" -eq 0 ] || die "needs root (buildah builds and runs with --isolation chroot as root here); fix: sudo bash scripts/image_check.sh"
for tool in buildah unshare nsenter flock ip curl python3; do
  command -v "$tool" >/dev/null || die "'$tool' is missing; fix: apt-get install -y buildah debootstrap iproute2 util-linux curl python3"
done
FROM=$(sed -n 's/^FROM[[:space:]]\+\([^[:space:]]\+\).*/\1/p' Dockerfile | head -1)
TORCH_VERSION=$(sed -n 's/^ARG TORCH_VERSION=\(.*\)$/\1/p' Dockerfile)
DEFAULT_INDEX=$(sed -n 's/^ARG TORCH_INDEX=\(.*\)$/\1/p' Dockerfile)
[ -n "$FROM" ] && [ -n "$TORCH_VERSION" ] && [ -n "$DEFAULT_INDEX" ] \
  || die "Dockerfile lacks a FROM line or the ARG TORCH_VERSION=/ARG TORCH_INDEX= defaults this check reads"
mkdir -p "$CACHE"
# One check at a time on a host: they share the image name, the stand-in and the cache.
exec 9>"$CACHE/lock"
flock -w 1800 9 || die "another image check has held $CACHE/lock for 30 minutes; fix: wait for it to end, or end it"
WORK=$(mktemp -d)

SERVER_PID="" RUN_CTR="" PROBE_CTR=""
cleanup() {
  set +e
  [ -n "$SERVER_PID" ] && kill -KILL "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  for c in "$RUN_CTR" "$PROBE_CTR"; do [ -n "$c" ] && buildah rm "$c" >/dev/null 2>&1; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# -- 1. the base image ----------------------------------------------------------------------------
step "base image $FROM"
case "$FROM" in
  python:3.11-slim|docker.io/library/python:3.11-slim) BASE=docker.io/library/python:3.11-slim ;;
  *) BASE=$FROM ;;
esac
standin_of() { buildah inspect --type image --format "{{index .OCIv1.Config.Labels \"$STANDIN_LABEL\"}}" "$1" 2>/dev/null; }
if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  have=$(standin_of "$BASE")
  if [ -z "$have" ] || [ "$have" = "<no value>" ]; then
    echo "using $BASE from buildah's storage (not a stand-in)"
  elif [ "$have" = "debootstrap-bookworm-v$STANDIN_VERSION" ]; then
    echo "using the cached stand-in $BASE ($have)"
  else
    echo "cached stand-in $BASE is $have, this script makes v$STANDIN_VERSION: rebuilding it"
    buildah rmi "$BASE" >/dev/null \
      || die "cannot remove the old stand-in $BASE (images or containers still use it); fix: buildah rm --all, then buildah rmi $TAG $BASE"
  fi
fi
if ! buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  [ "$BASE" = docker.io/library/python:3.11-slim ] \
    || die "base image $FROM is not in buildah's storage and no registry is reachable; fix: 'buildah pull $FROM' on a host with registry access, or make FROM python:3.11-slim again"
  command -v debootstrap >/dev/null || die "'debootstrap' is missing (needed once, to make the stand-in base); fix: apt-get install -y debootstrap"
  echo "making a stand-in for python:3.11-slim from Debian bookworm ($MIRROR), cached in buildah's storage"
  t0=$(now)
  rootfs=$WORK/rootfs
  timeout 900 debootstrap --variant=minbase --include=python3,python3-pip,python-is-python3,ca-certificates,netbase \
    bookworm "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log"; die "debootstrap failed (log: $CACHE/debootstrap.log); fix: check that $MIRROR is reachable or set DEBIAN_MIRROR"; }
  # Like the official image: pip installs into the system interpreter (no PEP 668 marker), apt lists
  # are not kept, bookworm's updates and security suites are configured.
  rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
  security=${MIRROR%/debian}/debian-security
  [ "$security" = "$MIRROR/debian-security" ] && security=http://deb.debian.org/debian-security
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
    "$MIRROR" "$MIRROR" "$security" >"$rootfs/etc/apt/sources.list"
  # Certificate authorities this host adds to the system set (a TLS-inspecting egress proxy, for
  # instance) are trusted inside too, or nothing in the build could reach PyPI from here.
  extra_cas=$(find /usr/local/share/ca-certificates -name '*.crt' 2>/dev/null | wc -l)
  if [ "$extra_cas" -gt 0 ]; then
    cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/"
    chroot "$rootfs" update-ca-certificates >>"$CACHE/debootstrap.log" 2>&1
    echo "stand-in trusts $extra_cas extra CA certificate(s) of this host (/usr/local/share/ca-certificates)"
  fi
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  tar -C "$rootfs" -cf - . | tar -C "$mnt" -xf -
  buildah umount "$ctr" >/dev/null
  buildah config --env LANG=C.UTF-8 --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd python3 --label "$STANDIN_LABEL=debootstrap-bookworm-v$STANDIN_VERSION" "$ctr"
  buildah commit -q "$ctr" "$BASE" >/dev/null
  buildah rm "$ctr" >/dev/null
  rm -rf "$rootfs"
  echo "stand-in base made in $(secs "$t0" "$(now)") s: $(buildah images --noheading --format '{{.Size}}' "$BASE")"
fi

# -- 2. the torch index the build uses --------------------------------------------------------------
step "torch index"
BUILD_ARGS=()
if [ -n "${TORCH_INDEX:-}" ]; then
  BUILD_ARGS=(--build-arg "TORCH_INDEX=$TORCH_INDEX")
  echo "TORCH_INDEX=$TORCH_INDEX (from the environment)"
elif curl -fsS -o /dev/null --max-time 10 "$DEFAULT_INDEX/torch/" 2>/dev/null; then
  echo "the Dockerfile's default $DEFAULT_INDEX is reachable: building with it"
else
  # Not reachable from here: the CPU wheel the host's pip resolves (with torch's own dependencies)
  # becomes a PEP 503 index in a folder the build's RUN steps see at /mnt (a build-time bind mount,
  # never part of a layer). Its URL is the same in every run, so the layers stay cached.
  echo "$DEFAULT_INDEX is not reachable from this host: using torch==$TORCH_VERSION as the host's pip resolves it"
  index=$CACHE/torch-index
  mkdir -p "$index/files"
  timeout 600 python3 -m pip download -q "torch==$TORCH_VERSION" -d "$index/files" >"$WORK/pip-download.log" 2>&1 \
    || { tail -20 "$WORK/pip-download.log"; die "pip could not download torch==$TORCH_VERSION; fix: set TORCH_INDEX to an index that has its CPU build"; }
  ls "$index/files"/torch-"$TORCH_VERSION"+cpu-*.whl >/dev/null 2>&1 \
    || die "the host's pip resolves torch==$TORCH_VERSION to a non-CPU build ($(ls "$index/files" | grep '^torch-' | tr '\n' ' ')); fix: set TORCH_INDEX to an index with torch==$TORCH_VERSION+cpu"
  python3 - "$index" <<'EOF'
import html, re, shutil, sys
from pathlib import Path
root = Path(sys.argv[1])
shutil.rmtree(root / "simple", ignore_errors=True)
projects = {}
for whl in sorted((root / "files").glob("*.whl")):
    projects.setdefault(re.sub(r"[-_.]+", "-", whl.name.split("-")[0]).lower(), []).append(whl.name)
for name, files in projects.items():
    (root / "simple" / name).mkdir(parents=True)
    links = "".join(f'<a href="../../files/{html.escape(f)}">{html.escape(f)}</a>\n' for f in files)
    (root / "simple" / name / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
EOF
  BUILD_ARGS=(--volume "$index:/mnt:ro" --build-arg "TORCH_INDEX=file:///mnt/simple")
  echo "TORCH_INDEX=file:///mnt/simple, bind-mounted from $index ($(ls "$index/files" | grep '^torch-'))"
fi

# -- 3. build ---------------------------------------------------------------------------------------
step "build $TAG from ./Dockerfile"
CACHE_FLAGS=(--layers)
[ "${IMAGE_CHECK_NO_CACHE:-0}" = 1 ] && CACHE_FLAGS=(--no-cache)
t0=$(now)
if ! timeout 1500 buildah bud "${ISO[@]}" "${CACHE_FLAGS[@]}" --pull=never --format docker "${BUILD_ARGS[@]}" \
    -t "$TAG" -f Dockerfile . >"$CACHE/build.log" 2>&1; then
  tail -40 "$CACHE/build.log"
  echo "FAIL the Dockerfile builds within 25 minutes (full log: $CACHE/build.log)"
  exit 1
fi
BUILD_S=$(secs "$t0" "$(now)")
cached=$(grep -c -- '--> Using cache' "$CACHE/build.log" || true)
SIZE=$(buildah images --noheading --format '{{.Size}}' "$TAG" | head -1)
echo "PASS the Dockerfile builds: ${BUILD_S} s ($cached cached steps), image size $SIZE"

# -- 4. metadata: user, port, command, no token ------------------------------------------------------
step "image metadata"
buildah inspect --type image "$TAG" >"$WORK/inspect.json"
fails=0
python3 scripts/image_probe.py secrets "$WORK/inspect.json" || fails=$((fails + 1))
# user, port, HEALTHCHECK shell command, then the command's arguments, one per line
mapfile -t META < <(python3 scripts/image_probe.py config "$WORK/inspect.json")
USER_=${META[0]} PORT=${META[1]} HEALTH_CMD=${META[2]} CMD=("${META[@]:3}")
[ "$USER_" = 1000 ] && echo "PASS the image runs as USER 1000" || { echo "FAIL the image runs as USER 1000: '$USER_'"; fails=$((fails + 1)); }
[ -n "$PORT" ] || die "the image sets no PORT in its environment"
[ "${#CMD[@]}" -gt 0 ] || die "the image has no CMD"
echo "command: ${CMD[*]}"

# -- 5. run the image's command as uid 1000 -----------------------------------------------------------
step "run as uid 1000 in a private network namespace"
RUN_CTR=$(buildah from --pull=never "$TAG")
PROBE_CTR=$(buildah from --pull=never "$TAG")
# unshare: own network (only loopback, so 0.0.0.0 is not reachable from the host) and own PID
# namespace (when its first process dies, every process of the container dies with it).
STARTED=$(python3 -c 'import time; print(time.time())')
unshare --net --pid --fork --kill-child --mount-proc -- \
  bash -c 'ip link set lo up && exec "$@"' _ buildah run "${ISO[@]}" --user 1000 "$RUN_CTR" -- "${CMD[@]}" \
  >"$CACHE/server.log" 2>&1 &
SERVER_PID=$!
in_ns() { nsenter --net="/proc/$SERVER_PID/ns/net" -- "$@"; }
# /proc/PID/ns/net names the host's namespace until unshare has made the new one: wait for the switch.
host_net=$(readlink /proc/self/ns/net) ns=""
for _ in $(seq 200); do
  ns=$(readlink "/proc/$SERVER_PID/ns/net" 2>/dev/null || true)
  [ -n "$ns" ] && [ "$ns" != "$host_net" ] && break
  sleep 0.05
done
[ -n "$ns" ] && [ "$ns" != "$host_net" ] || die "the container's network namespace did not appear within 10 s (log: $CACHE/server.log)"
BASE_URL=http://127.0.0.1:$PORT
in_ns python3 scripts/image_probe.py serve "$BASE_URL" "$STARTED" "$GATE_S" || fails=$((fails + 1))
if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE_URL/health" 2>/dev/null)" = 200 ]; then
  echo "FAIL the container's port is not reachable from the host's network"; fails=$((fails + 1))
else
  echo "PASS the container's port is not reachable from the host's network"
fi
if [ -n "$HEALTH_CMD" ] && in_ns timeout 30 buildah run "${ISO[@]}" --user 1000 "$PROBE_CTR" -- sh -c "$HEALTH_CMD" >/dev/null 2>&1; then
  echo "PASS the image's HEALTHCHECK passes: $HEALTH_CMD"
else
  echo "FAIL the image's HEALTHCHECK passes: '${HEALTH_CMD:-none in the image}'"; fails=$((fails + 1))
fi
in_ns timeout 300 buildah run "${ISO[@]}" --user 1000 "$PROBE_CTR" -- python /app/scripts/image_probe.py episode "$BASE_URL" \
  || fails=$((fails + 1))
timeout 120 buildah run "${ISO[@]}" --user 1000 "$PROBE_CTR" -- python /app/scripts/image_probe.py app-tree /app \
  || fails=$((fails + 1))
# The attack gallery reads tests/redteam/ at run time (.dockerignore re-includes it): every attack of
# this tree must be listed inside the image.
timeout 120 buildah run "${ISO[@]}" --user 1000 "$PROBE_CTR" -- python /app/scripts/image_probe.py gallery /app \
  "$(python3 scripts/image_probe.py attack-count .)" || fails=$((fails + 1))

# -- 6. stop as docker stop does: SIGTERM to the command's process, SIGKILL after 10 s ----------------
step "stop"
leaf=$(python3 scripts/image_probe.py pid-of "$SERVER_PID" "${CMD[@]}")
if [ "$leaf" = 0 ]; then
  echo "FAIL the command's process is running before the stop"; fails=$((fails + 1)); leaf=$SERVER_PID
else
  uid=$(awk '/^Uid:/ {print $2 "," $3}' "/proc/$leaf/status")
  [ "$uid" = 1000,1000 ] && echo "PASS the server process runs as uid 1000 (real and effective)" \
    || { echo "FAIL the server process runs as uid 1000 (real and effective): $uid"; fails=$((fails + 1)); }
fi
echo "SIGTERM to pid $leaf ($(tr '\0' ' ' <"/proc/$leaf/cmdline" 2>/dev/null))"
kill -TERM "$leaf" 2>/dev/null || true
stopped=no
for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || { stopped=yes; break; }; sleep 0.1; done
if [ "$stopped" = yes ]; then
  echo "PASS the server stopped within 10 s of SIGTERM"
else
  echo "FAIL the server stopped within 10 s of SIGTERM (killed)"; fails=$((fails + 1))
  kill -KILL "$SERVER_PID" 2>/dev/null || true
fi
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
grep -q "Application startup complete" "$CACHE/server.log" \
  && grep -q "Finished server process" "$CACHE/server.log" \
  && echo "PASS the server log shows a clean start and shutdown" \
  || { echo "FAIL the server log shows a clean start and shutdown:"; tail -30 "$CACHE/server.log"; fails=$((fails + 1)); }

step "summary"
echo "build time: ${BUILD_S} s ($cached cached steps; gate on a Space: 600 s)"
echo "image size: $SIZE ($TAG)"
echo "server log: $CACHE/server.log"
if [ "$fails" -gt 0 ]; then
  echo "image check: FAIL ($fails failed group(s))"
  exit 1
fi
echo "image check: PASS"
