#!/usr/bin/env bash
# Install, build the model repository, check the house's rules (scripts/lint.sh), and run every test: unit,
# deployment checks, and the integration tests against a Triton server they start (or the one given with
# --triton-url URL).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
scripts/lint.sh
poetry run pytest "$@"
