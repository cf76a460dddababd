#!/usr/bin/env bash
# The house's rules, as CI checks them: ruff's lint and format (pyproject.toml, [tool.ruff]) and the rooms' layers
# and the client side's imports (import-linter, [tool.importlinter]). In the project's environment (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
poetry run ruff check .
poetry run ruff format --check .
poetry run lint-imports
