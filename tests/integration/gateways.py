"""`plates gateway` processes for the integration tests: each as `plates serve` runs it in front of Triton (the same
command, its settings from PLATES_GATEWAY_* variables), on a free port of 127.0.0.1, against the session's Triton."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import requests

from plates.server.launcher import free_port


@contextlib.contextmanager
def running_gateway(triton_url: str, triton_grpc_url: str, log: Path, **variables: str) -> Iterator[str]:
    """A gateway whose settings are `variables` (ANONYMOUS_FROM="127.0.0.0/8" sets PLATES_GATEWAY_ANONYMOUS_FROM),
    ready: its URL. Stopped afterwards."""
    port = free_port()
    environ = {name: value for name, value in os.environ.items() if not name.startswith("PLATES_GATEWAY_")}
    environ.update({f"PLATES_GATEWAY_{name}": value for name, value in variables.items()})
    command = [sys.executable, "-m", "plates.cli.main", "gateway", "--port", str(port), "--triton-grpc",
               triton_grpc_url, "--triton-http", triton_url, "--health-interval", "1"]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environ)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, process, log)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_ready(url: str, process: subprocess.Popen | None = None, log: Path | None = None,
                     timeout: float = 60) -> None:  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None:
            assert process.poll() is None, f"the gateway exited with {process.returncode}: {log.read_text()[-2000:]}"
        try:
            if requests.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the gateway was not ready in {timeout} s: {log.read_text()[-2000:] if log else url}")
