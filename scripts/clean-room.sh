#!/usr/bin/env bash
# The README as a new user meets it: in a fresh container made from a bare Debian 12 (the stand-in base, debootstrap),
# install only the README's prerequisites with the README's own command, `git clone` this repository's committed
# HEAD, and run `scripts/test.sh` (set-up, then every test). A program the project takes silently from the machine
# then fails here instead of on a user's machine. Prints how long each phase took; exits non-zero on any failure,
# and where no container engine can run (never a silent skip).
#
#   scripts/clean-room.sh               # every test
#   scripts/clean-room.sh tests/unit    # arguments go to pytest, as scripts/test.sh passes them
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "clean-room: $*" >&2; }
die() { say "$*"; exit 1; }

# --- what the README says ------------------------------------------------------------------------------------------
# The prerequisites are the code block after this marker in the README of the commit under test, run as written:
# the README and this check cannot drift. (awk reads to the end: exiting early would break git show's pipe.)
commit=$(git rev-parse HEAD)
MARKER='<!-- clean-room: prerequisites -->'
prerequisites=$(git show "$commit:README.md" | awk -v marker="$MARKER" '
  $0 == marker && !state { state = 1; next }
  state && /^```/ { state = (state == 1) ? 2 : 3; next }
  state == 2 { print }')
[ -n "$prerequisites" ] || die "README.md has no code block after '$MARKER': nothing says what a bare machine needs"

# The recognizer weights live beside the repository (gitignored in it), as on the machines the README describes.
shared=$(realpath -e ../shared 2>/dev/null) || die "../shared (the weights and samples) is not beside the repository"
[ -z "$(git status --porcelain --untracked-files=no)" ] \
  || say "uncommitted changes are not tested: the clean room clones the committed HEAD ($commit)"

# --- the engine and the bare Debian --------------------------------------------------------------------------------
source scripts/lib/engine.sh
select_engine "to run the clean-room check"
say "engine: ${ENGINE[*]}"
make_debian_base

# --- the mounts ------------------------------------------------------------------------------------------------------
# The download caches, read-write, so that a run reuses the 3 GB of wheels instead of fetching them again: pip's
# (the Poetry installer that scripts/setup.sh makes with pip) and Poetry's (where `poetry install` keeps the wheels it
# downloaded: artifacts/, and the index's answers: cache/). Root inside the container is the caller outside (root with
# rootful Podman or Docker, the calling user with rootless Podman), so what a run adds to the caches stays the
# caller's; a user inside would leave files there that the caller's own set-up could not replace.
cache="${XDG_CACHE_HOME:-$HOME/.cache}"
pip_cache="${PIP_CACHE_DIR:-$cache/pip}"
poetry_cache="${POETRY_CACHE_DIR:-$cache/pypoetry}"
mkdir -p "$pip_cache" "$poetry_cache"
MOUNTS=(-v "$PWD:/src:ro" -v "$shared:/work/shared:ro"
  -v "$pip_cache:/root/.cache/pip" -v "$poetry_cache:/root/.cache/pypoetry")
ENVIRONMENT=()
# Not a prerequisite but this machine's network: where HTTPS goes through a proxy that a local CA vouches for, the
# container trusts the same CAs (the README's ca-certificates package adds them to the container's bundle when it
# installs) and the same variables point pip, Poetry (requests) and OpenSSL at that bundle. On an ordinary machine
# neither exists and nothing is added.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  MOUNTS+=(-v /usr/local/share/ca-certificates:/usr/local/share/ca-certificates:ro)
fi
for name in PIP_CERT REQUESTS_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE GIT_SSL_CAINFO; do
  if [ -n "${!name:-}" ]; then ENVIRONMENT+=(-e "$name"); fi
done
results=$(mktemp -d /var/tmp/plates-clean-room.XXXXXX)
MOUNTS+=(-v "$results:/results")

# --- the run ---------------------------------------------------------------------------------------------------------
# Inside: each phase bounded by a timeout, its seconds written to /results for the summary below.
# shellcheck disable=SC2016  # expanded inside the container
inner='
set -euo pipefail
phase() { echo "$1=$2" >> /results/phases; }
echo "clean-room: the README prerequisites: $PREREQUISITES" >&2
SECONDS=0
timeout 900 bash -euo pipefail -c "$PREREQUISITES" </dev/null
phase prerequisites_s $SECONDS
SECONDS=0
git -c safe.directory="*" clone -q --no-checkout /src /work/plates
cd /work/plates
git checkout -q --detach "$COMMIT"
echo "clean-room: cloned $(git log --oneline -1 | cut -c1-100)" >&2
timeout 1800 scripts/setup.sh
phase setup_s $SECONDS
SECONDS=0
status=0
timeout 1800 scripts/test.sh "$@" || status=$?
phase tests_s $SECONDS
exit $status
'
NAME="plates-clean-room-$$"
cleanup() {
  "${ENGINE[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$results"
}
trap cleanup EXIT
say "a fresh Debian 12 container ($NAME) for commit $commit"
SECONDS=0
status=0
# --init reaps the stubs that the integration tests kill and orphan; Triton's Python backend keeps its tensors in
# /dev/shm (the engines' 64 MB default is too small); /tmp is the container's own disk.
timeout 3600 "${ENGINE[@]}" run --rm --init --name "$NAME" --shm-size 1g "${MOUNTS[@]}" "${ENVIRONMENT[@]}" \
  -e PREREQUISITES="$prerequisites" -e COMMIT="$commit" -w /work "$DEBIAN_BASE" \
  bash -c "$inner" clean-room "$@" || status=$?
total_s=$SECONDS

# --- what it took --------------------------------------------------------------------------------------------------
setup_s=- tests_s=-
# shellcheck disable=SC1091
if [ -f "$results/phases" ]; then source "$results/phases"; fi
# The first phase is the rest: the container's start and removal with the README's apt-get command.
first_s=-
[ "$tests_s" != - ] && first_s=$((total_s - setup_s - tests_s))
echo "clean-room: container and README prerequisites ${first_s} s (apt-get ${prerequisites_s:--} s)," \
  "clone and scripts/setup.sh ${setup_s} s, scripts/test.sh ${tests_s} s; ${total_s} s in all"
[ $status = 0 ] && echo "clean-room: passed" || echo "clean-room: FAILED (exit $status)"
exit $status
