#!/usr/bin/env bash
# Install the project (Poetry, pinned by poetry.lock) and build the model repository from the weights.
set -euo pipefail
cd "$(dirname "$0")/.."

POETRY_VERSION=2.5.1
POETRY_HOME="${POETRY_HOME:-$HOME/.local/share/plates-poetry}"
if ! poetry --version 2>/dev/null | grep -q "$POETRY_VERSION"; then
  if [ ! -x "$POETRY_HOME/bin/poetry" ]; then
    echo "installing Poetry $POETRY_VERSION into $POETRY_HOME" >&2
    python3 -m venv "$POETRY_HOME"
    "$POETRY_HOME/bin/pip" install --quiet "poetry==$POETRY_VERSION" "poetry-plugin-export==1.10.1"
  fi
  export PATH="$POETRY_HOME/bin:$PATH"
fi

poetry install --no-interaction --all-extras
poetry run python convert/build_model_repository.py
