#!/usr/bin/env bash
# Make .gpu/, the bundle scripts/gpu-check.sh carries to a GPU machine (plates.gpu_check.bundle): the locked Triton
# and wheels that machine lacks, the photos, and this machine's answers to them, served on the CPU from the bundle.
# About 5 minutes on 2 cores. Arguments go to `python -m plates.gpu_check bundle` (--out, --data).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
poetry run python -m plates.gpu_check bundle "$@"
