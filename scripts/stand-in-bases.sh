#!/usr/bin/env bash
# Build the local stand-ins for the serving image's two bases (docs/deploy.md, "Stand-in bases"), where neither
# python:3.12-slim-bookworm nor nvcr.io/nvidia/tritonserver:26.07-py3 can be pulled:
#   localhost/plates-stand-in/python:bookworm, localhost/plates-stand-in/tritonserver:2.51
# Usage: scripts/stand-in-bases.sh ENGINE [ENGINE OPTIONS...]   (as scripts/test-image.sh calls it), in the
# project's environment (scripts/setup.sh), whose nvidia-pytriton wheel provides Triton.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 ENGINE [OPTIONS...]" >&2; exit 2; }
ENGINE=("$@")
source scripts/lib/engine.sh

# A registry-free Debian 12 (scripts/lib/engine.sh): debootstrap, imported as an image. Made once; the engine keeps it.
make_debian_base

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
  "${ENGINE[@]}" build -q --target "$target" --build-arg DEBIAN="$DEBIAN_BASE" \
    -t "localhost/plates-stand-in/$target:$tag" -f "$context/Containerfile" "$context" >/dev/null
done
echo "stand-in-bases: localhost/plates-stand-in/python:bookworm, localhost/plates-stand-in/tritonserver:2.51" >&2
