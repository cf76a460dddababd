#!/usr/bin/env bash
# Build the local stand-ins for the serving image's two bases (docs/deploy.md, "Stand-in bases"), where neither
# python:3.10-slim-bookworm nor nvcr.io/nvidia/tritonserver:24.10-py3 can be pulled:
#   localhost/plates-stand-in/python:bookworm, localhost/plates-stand-in/tritonserver:2.51
# Usage: scripts/stand-in-bases.sh ENGINE [ENGINE OPTIONS...]   (as scripts/test-image.sh calls it), in the
# project's environment (scripts/setup.sh), whose nvidia-pytriton wheel provides Triton.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 ENGINE [OPTIONS...]" >&2; exit 2; }
ENGINE=("$@")
DEBIAN=localhost/plates-stand-in/debian:bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# A registry-free Debian 12: debootstrap, imported as an image. Made once; the engine keeps it.
if ! "${ENGINE[@]}" image inspect "$DEBIAN" >/dev/null 2>&1; then
  if ! command -v debootstrap >/dev/null; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
      || { echo "stand-in-bases: debootstrap is needed (as root) to make a Debian base" >&2; exit 1; }
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  root=$(mktemp -d /var/tmp/plates-debian.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "stand-in-bases: debootstrap bookworm from $MIRROR" >&2
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
  tar -C "$root" -c . | "${ENGINE[@]}" import - "$DEBIAN" >/dev/null
  rm -rf "$root"
fi

# The build context: the wheel's Triton with the Python backend, the project's PyTorch stand-in, their libraries.
context=$(mktemp -d /var/tmp/plates-stand-in.XXXXXX)
trap 'rm -rf "$context"' EXIT
wheel=$(poetry run python -c 'from plates.server.launcher import pytriton_dir; print(pytriton_dir())')
mkdir -p "$context/tritonserver/backends"
cp -r "$wheel/tritonserver/bin" "$wheel/tritonserver/caches" "$wheel/tritonserver/python_backend_stubs" \
  "$context/tritonserver/"
cp -r "$wheel/tritonserver/backends/python" backends/pytorch "$context/tritonserver/backends/"
cp -r "$wheel/../nvidia_pytriton.libs" "$context/libs"
cp deploy/stand-in/Containerfile "$context/"
for target in python tritonserver; do
  tag=$([ $target = python ] && echo bookworm || echo 2.51)
  "${ENGINE[@]}" build -q --target "$target" --build-arg DEBIAN="$DEBIAN" \
    -t "localhost/plates-stand-in/$target:$tag" -f "$context/Containerfile" "$context" >/dev/null
done
echo "stand-in-bases: localhost/plates-stand-in/python:bookworm, localhost/plates-stand-in/tritonserver:2.51" >&2
