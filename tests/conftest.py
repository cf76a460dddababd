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
    # tests/image: the built serving image and a container of it (scripts/test-image.sh passes these).
    parser.addoption("--image", help="the serving image to test (tests/image runs only when it is given)")
    parser.addoption("--container", help="a running container of --image, published at --triton-url")
    parser.addoption("--engine", default="docker", help='the container engine command, e.g. "podman --runtime runc"')


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Without an image there is nothing for tests/image to test: scripts/test-image.sh builds one and runs them.
    if collection_path.name == "image" and collection_path.parent == Path(__file__).parent:
        return not config.getoption("--image")
    return None


@pytest.fixture(scope="session")
def samples() -> Path:
    if not (SAMPLES / "car.jpg").is_file():
        pytest.fail(f"sample photos not found in {SAMPLES}; set PLATES_SHARED_DIR to the shared/ folder")
    return SAMPLES
