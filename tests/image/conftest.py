"""The built serving image and one running container of it, as scripts/test-image.sh starts it."""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Engine:
    command: list[str]  # docker, or podman with its options

    def __call__(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.command, *args], capture_output=True, text=True, timeout=timeout, check=check)

    def inspect(self, name: str, template: str) -> str:
        return self("inspect", "--format", template, name).stdout.strip()


@pytest.fixture(scope="session")
def engine(request) -> Engine:
    return Engine(shlex.split(request.config.getoption("--engine")))


@pytest.fixture(scope="session")
def image(request) -> str:
    return request.config.getoption("--image")


@pytest.fixture(scope="session")
def container(request) -> str:
    name = request.config.getoption("--container")
    if not name or not request.config.getoption("--triton-url"):
        pytest.fail("tests/image needs --container NAME and --triton-url URL of a running container of --image")
    return name


@pytest.fixture(scope="session")
def url(request, container) -> str:
    return request.config.getoption("--triton-url")
