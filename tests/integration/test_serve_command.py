"""`plates serve` as a user runs it: ready, prints its URL, stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plates.readiness import is_ready, wait_for_server
from plates.server.launcher import free_port


def wait_for_text(path: Path, text: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)


def test_serve_prints_its_url_and_stops_cleanly_on_sigterm(request, tmp_path):
    if request.config.getoption("--triton-url"):
        pytest.skip("tests the local launcher; a server was given with --triton-url")
    http = free_port()
    ports = ["--http-port", str(http), "--grpc-port", str(free_port()), "--metrics-port", str(free_port())]
    log = tmp_path / "serve.log"  # a file, not a pipe: Triton's own log could fill a pipe nobody reads yet
    with log.open("w") as stdout:
        process = subprocess.Popen([sys.executable, "-m", "plates.cli.main", "serve", *ports], stdout=stdout)
        try:
            wait_for_server(f"localhost:{http}", timeout=300, alive=lambda: process.poll() is None)
            # The launcher polls readiness on its own schedule: the server can be ready before it says so.
            wait_for_text(log, f"Triton is ready at http://localhost:{http}", process, timeout=30)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    output = log.read_text()
    assert f"Triton is ready at http://localhost:{http}" in output
    assert process.returncode == 0
    assert not is_ready(f"localhost:{http}")
