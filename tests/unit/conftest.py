"""Fixtures of the supervisor's and the health check's tests: a tree of processes shaped as tritonserver's, and a folder
of their own for the supervisor's verdicts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from plates.server.health import VERDICT_DIR_VARIABLE
from plates.server.processes import stubs

SLEEP = "import time; time.sleep(120)"
# A parent that never reaps its children, as tritonserver does not at once: a stub killed with -9 stays a zombie.
PARENT = "import subprocess, sys, time; [subprocess.Popen([sys.executable, p]) for p in sys.argv[1:]]; time.sleep(120)"


@pytest.fixture
def verdict_dir(tmp_path_factory, monkeypatch) -> Path:
    folder = tmp_path_factory.mktemp("verdicts")
    monkeypatch.setenv(VERDICT_DIR_VARIABLE, str(folder))
    return folder


@pytest.fixture
def stub_tree(tmp_path) -> Callable[..., subprocess.Popen]:
    """stub_tree("yolo", "stn") starts a process with one child per model, run on `<repository>/<model>/1/model.py`
    as Triton's stubs are, and returns it once every child runs; all of them are killed after the test."""
    started = []

    def start(*models: str) -> subprocess.Popen:
        files = []
        for model in models:
            path = tmp_path / "repository" / model / "1" / "model.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SLEEP)
            files.append(str(path))
        parent = subprocess.Popen([sys.executable, "-c", PARENT, *files], start_new_session=True)
        started.append(parent)
        deadline = time.monotonic() + 30  # three interpreters to start on a busy machine
        while len(stubs(parent.pid)) < len(models):
            assert time.monotonic() < deadline, "the fake stubs did not start"
            time.sleep(0.05)
        return parent

    yield start
    for parent in started:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
