#!/usr/bin/env bash
# Build the serving image from the Dockerfile, start it hardened as users would (user 1000, read-only root,
# 512 MiB /dev/shm, ports on 127.0.0.1 only), run tests/integration and tests/image against it (Triton's ports and
# the gateway's, which attacks it through its published port), stop it. Last, tests/image starts deploy/k8s's
# Deployment with its Secret under podman kube play on the same image, reads car.jpg through its gateway, and tears
# it down (tests/image/test_kube_play.py; it publishes the Deployment's ports 8000-8002 and 8080 on the host).
# Exits non-zero if anything failed, or if no container engine can run here (never a silent skip).
#
#   scripts/test-image.sh                        # Docker where an engine answers, else Podman (installed if needed)
#   PLATES_IMAGE_BASE=stand-in scripts/test-image.sh   # force the local stand-in bases (docs/deploy.md)
#   PLATES_IMAGE_BASE=ngc scripts/test-image.sh        # force NGC's Triton (pulls it)
#   PLATES_IMAGE_KEEP=1 scripts/test-image.sh          # leave the container running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "test-image: $*" >&2; }
die() { say "$*"; exit 1; }
now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

TRITON_IMAGE=nvcr.io/nvidia/tritonserver:26.07-py3
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
BASE="${PLATES_IMAGE_BASE:-auto}"
case "$BASE" in auto | ngc | stand-in) ;; *) die "PLATES_IMAGE_BASE must be auto, ngc or stand-in, not '$BASE'" ;; esac

# --- the engine --------------------------------------------------------------------------------------------------
# The shared engine code (scripts/lib/engine.sh) sets ENGINE, installing Podman where no engine answers.
source scripts/lib/engine.sh
select_engine "to test the image"
say "engine: ${ENGINE[*]}"

# The project's environment: the tests that run against the container, the weights lookup, the stand-ins' Triton.
source scripts/setup.sh >/dev/null

# --- the bases -----------------------------------------------------------------------------------------------------
BUILD_ARGS=()
if [ "$BASE" = auto ]; then
  if "${ENGINE[@]}" image inspect "$TRITON_IMAGE" >/dev/null 2>&1 \
    || timeout 1200 "${ENGINE[@]}" pull -q "$TRITON_IMAGE" >/dev/null 2>&1; then
    BASE=ngc
  else
    BASE=stand-in
    say "$TRITON_IMAGE cannot be pulled here: building on the local stand-in bases (docs/deploy.md)"
  fi
fi
if [ "$BASE" = stand-in ]; then
  scripts/stand-in-bases.sh "${ENGINE[@]}"
  BUILD_ARGS+=(--build-arg LOCK_BASE=localhost/plates-stand-in/python:bookworm
    --build-arg TRITON_BASE=localhost/plates-stand-in/tritonserver:2.51)
fi
# The models run on the GPU only where the image is NGC's and this machine has one.
KIND=cpu
[ "$BASE" = ngc ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && KIND=gpu
IMAGE="localhost/plates:$VERSION-$KIND"
[ "$BASE" = stand-in ] && IMAGE="$IMAGE-stand-in"
RUN_ARGS=()
[ "$KIND" = gpu ] && RUN_ARGS+=(--gpus all)

# --- build -------------------------------------------------------------------------------------------------------
if [ "${ENGINE[0]}" = podman ]; then
  # Podman writes OCI images by default, which have no HEALTHCHECK: Docker's format keeps it.
  BUILD_ARGS+=(--format docker)
fi
if [ "${ENGINE[0]}" = podman ] && [ -d /etc/ssl/certs ]; then
  # pip inside the build reaches PyPI only with this machine's CA certificates (a build-time volume: nothing lands
  # in the image, and the Dockerfile stays the one production builds use).
  BUILD_ARGS+=(-v /etc/ssl/certs:/etc/ssl/certs:ro)
fi
say "building $IMAGE ($BASE base, models on the $KIND)"
start=$(now)
# The lock stage gets a tag of its own, so that its layers count as used and stay cached through the prune below.
"${ENGINE[@]}" build --target lock "${BUILD_ARGS[@]}" -t "localhost/plates-lock:$VERSION" . >&2
"${ENGINE[@]}" build --build-arg INSTANCE_KIND="$KIND" "${BUILD_ARGS[@]}" -t "$IMAGE" . >&2
build_s=$(seconds "$start" "$(now)")
# What this build replaced stays behind untagged (several GB each time the lock changes): remove it, keeping every
# layer a tagged image uses.
"${ENGINE[@]}" image prune -f >/dev/null 2>&1 || true
size=$("${ENGINE[@]}" image inspect --format '{{.Size}}' "$IMAGE")

# --- run ---------------------------------------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP=$(free_port) GRPC=$(free_port) METRICS=$(free_port) GATEWAY=$(free_port)
NAME="plates-image-test-$$"
cleanup() {
  if [ -z "${PLATES_IMAGE_KEEP:-}" ]; then
    "${ENGINE[@]}" kill "$NAME" >/dev/null 2>&1 || true
    "${ENGINE[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
# As the Kubernetes manifest runs it: UID 1000, nothing writable but /tmp and /dev/shm.
# The supervisor in the image exits when the server fails its deep health check; the restart policy starts it again.
# PLATES_ADMIN_KEY opens the admin APIs to the tests (tests/integration/conftest.py uses the same default).
export PLATES_ADMIN_KEY="${PLATES_ADMIN_KEY:-plates-integration-tests}"
# The gateway listens on 0.0.0.0 inside, so it needs a key; the tests send the same one (PLATES_GATEWAY_KEY). Its
# deadlines are those tests/integration/test_gateway.py gives the gateway it starts itself, so that the trickling
# attacks end in seconds; its health check runs every second, as there.
PLATES_GATEWAY_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
export PLATES_GATEWAY_KEY PLATES_GATEWAY_KEYS="$PLATES_GATEWAY_KEY" PLATES_GATEWAY_HEADER_TIMEOUT=2 \
  PLATES_GATEWAY_BODY_TIMEOUT=3 PLATES_GATEWAY_HEALTH_INTERVAL=1
# Podman without systemd cannot schedule health checks and says so on every start; tests/image runs the check
# itself. What the engine says is shown only if the container does not start.
if ! said=$("${ENGINE[@]}" run -d --name "$NAME" --user 1000:1000 --read-only --tmpfs /tmp:rw,size=256m \
  --shm-size 512m --stop-timeout 40 --restart on-failure -e PLATES_ADMIN_KEY -e PLATES_GATEWAY_KEYS \
  -e PLATES_GATEWAY_HEADER_TIMEOUT -e PLATES_GATEWAY_BODY_TIMEOUT -e PLATES_GATEWAY_HEALTH_INTERVAL "${RUN_ARGS[@]}" \
  -p "127.0.0.1:$HTTP:8000" -p "127.0.0.1:$GRPC:8001" -p "127.0.0.1:$METRICS:8002" -p "127.0.0.1:$GATEWAY:8080" \
  "$IMAGE" 2>&1 >/dev/null); then
  echo "$said" >&2
  die "the container did not start"
fi
start=$(now)
if ! poetry run python -c "from plates.client.readiness import wait_for_server as w; w('127.0.0.1:$HTTP', timeout=600)"; then
  "${ENGINE[@]}" logs --tail 50 "$NAME" >&2 || true
  die "the container did not become ready"
fi
ready_s=$(seconds "$start" "$(now)")

# --- test --------------------------------------------------------------------------------------------------------
status=0
ENDPOINTS=(--triton-url "127.0.0.1:$HTTP" --triton-grpc-url "127.0.0.1:$GRPC" --gateway-url "127.0.0.1:$GATEWAY")
poetry run pytest tests/integration "${ENDPOINTS[@]}" -q "$@" || status=1
# kube play is Podman's: where Docker built the image, Podman gets a copy.
KUBE=()
if [ "${ENGINE[0]}" = docker ]; then
  select_podman "for podman kube play" || die "podman kube play (tests/image/test_kube_play.py) needs Podman"
  docker save "$IMAGE" | "${PODMAN[@]}" load -q >/dev/null
  KUBE=(--kube-engine "${PODMAN[*]}")
fi
# Last: test_image.py ends by stopping the container, then test_kube_play.py starts the Deployment.
poetry run pytest tests/image --image "$IMAGE" --container "$NAME" --engine "${ENGINE[*]}" "${KUBE[@]}" \
  "${ENDPOINTS[@]}" -q "$@" || status=1
[ $status = 0 ] || "${ENGINE[@]}" logs --tail 80 "$NAME" >&2 || true

echo "image: $IMAGE"
awk -v b="$size" 'BEGIN { printf "image size: %.2f GB\n", b / 1e9 }'
echo "build time: ${build_s} s"
echo "start to ready: ${ready_s} s"
[ $status = 0 ] && echo "image tests: passed" || echo "image tests: FAILED"
exit $status
