"""Where the project's files are: the checkout, and the model repository the build fills and `plates serve` serves."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_REPOSITORY = PROJECT_ROOT / "model_repository"
