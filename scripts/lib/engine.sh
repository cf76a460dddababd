# shellcheck shell=bash
# The container engine and the bare Debian 12 base, for the scripts that run containers (test-image.sh,
# stand-in-bases.sh, clean-room.sh). Sourced, not run: the caller has `set -euo pipefail` and is in the repository root.
# Messages name the calling script ("test-image: ..."), as each script's own did before they shared this.

ENGINE_WHO="$(basename "$0" .sh)"
DEBIAN_BASE=localhost/plates-stand-in/debian:bookworm

engine_say() { echo "$ENGINE_WHO: $*" >&2; }
engine_die() { engine_say "$*"; exit 1; }

# Sets ENGINE to the command that runs containers: Docker where an engine answers, else Podman (select_podman).
# Exits non-zero where neither can run containers: a check that cannot run here fails rather than skips silently.
# $1 says what for ("to test the image").
select_engine() {
  local purpose="${1:-to run containers}"
  ENGINE=()
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    ENGINE=(docker)
  elif select_podman "$purpose"; then
    ENGINE=("${PODMAN[@]}")
  fi
  [ ${#ENGINE[@]} -gt 0 ] \
    || engine_die "neither a Docker engine nor Podman is available here; install one $purpose"
  "${ENGINE[@]}" info >/dev/null 2>&1 \
    || engine_die "${ENGINE[0]} is installed but cannot run containers here: ${ENGINE[*]} info fails"
}

# Sets PODMAN to the command that runs Podman, installed with runc from the distribution's packages when either is
# missing and run as root (a Podman installed alone brings crun, which hybrid cgroups refuse); returns non-zero where
# there is none. $1 says what for.
select_podman() {
  local purpose="${1:-to run containers}"
  PODMAN=()
  if { ! command -v podman || ! command -v runc; } >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null
  then
    engine_say "installing Podman and runc from the distribution's packages $purpose"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc >/dev/null \
      || engine_die "installing podman failed"
  fi
  command -v podman >/dev/null || return 1
  # Sandboxes that refuse raising rlimits refuse Podman's default ulimits; runc and cgroupfs work where crun and
  # systemd's cgroup manager do not (hybrid cgroups, no systemd). Both are right on an ordinary host too.
  export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/deploy/stand-in/containers.conf}"
  PODMAN=(podman --cgroup-manager cgroupfs)
  command -v runc >/dev/null && PODMAN+=(--runtime runc)
  return 0
}

# Makes $DEBIAN_BASE with ENGINE (an array, as select_engine sets it) unless the engine has it: a registry-free
# Debian 12, debootstrapped from $DEBIAN_MIRROR and imported as an image. Made once; the engine keeps it.
make_debian_base() {
  "${ENGINE[@]}" image inspect "$DEBIAN_BASE" >/dev/null 2>&1 && return 0
  local mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}" root
  if ! command -v debootstrap >/dev/null; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
      || engine_die "debootstrap is needed (as root) to make a Debian base"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  root=$(mktemp -d /var/tmp/plates-debian.XXXXXX)
  engine_say "debootstrap bookworm from $mirror"
  # The subshell removes the half-made root whichever way it ends, without touching the caller's EXIT trap.
  (
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
    tar -C "$root" -c . | "${ENGINE[@]}" import - "$DEBIAN_BASE" >/dev/null
  )
}
