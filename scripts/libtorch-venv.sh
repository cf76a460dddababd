#!/usr/bin/env bash
# The production libtorch's stand-in: torch 2.13.0 (the nearest to NGC 26.07's libtorch) in a venv of its own,
# .venv-libtorch, apart from the project's locked torch 2.5.1 that writes the TorchScript files. tests/unit/
# test_libtorch.py loads the exported stn and lprnet there and checks their outputs against torch 2.5.1's.
# pip takes a CPU build where the machine's pip configuration offers one (a local wheel folder), else PyPI's build.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-libtorch
if ! "$VENV/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" 2>/dev/null; then
  echo "installing torch 2.13.0 into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "torch==2.13.0"
fi
"$VENV/bin/python" -c "import torch; print(f'$VENV: torch {torch.__version__}')"
