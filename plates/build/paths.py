"""Where the project's files are: the checkout, the model repository the build fills and `plates serve` serves, and
the shared folder of weights, typeface and data that is not in the repository."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_REPOSITORY = PROJECT_ROOT / "model_repository"


def shared_dir() -> Path:
    """The shared folder (weights/, fonts/, data/): $PLATES_SHARED_DIR, else ../shared beside the checkout. Read at
    each call, as the weights' own $PLATES_WEIGHTS_DIR is, so a test or a script may set it first."""
    return Path(os.environ.get("PLATES_SHARED_DIR") or PROJECT_ROOT.parent / "shared")
