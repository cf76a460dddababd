"""Shared fixtures: where the sample data lives, and the --triton-url option of the integration tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plates.weights import PROJECT_ROOT

SHARED = Path(os.environ.get("PLATES_SHARED_DIR", PROJECT_ROOT.parent / "shared"))
SAMPLES = SHARED / "data" / "samples"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--triton-url",
        default=os.environ.get("PLATES_TRITON_URL"),
        help="run the integration tests against this running server (e.g. localhost:8000) instead of starting one",
    )


@pytest.fixture(scope="session")
def samples() -> Path:
    if not (SAMPLES / "car.jpg").is_file():
        pytest.fail(f"sample photos not found in {SAMPLES}; set PLATES_SHARED_DIR to the shared/ folder")
    return SAMPLES
