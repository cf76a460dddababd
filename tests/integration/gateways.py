"""`plates serve` and `plates gateway` processes for the integration tests, on free ports of 127.0.0.1: the gateway as
`plates serve` runs it in front of Triton (the same command, its settings from PLATES_GATEWAY_* variables)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

from plates.client.readiness import wait_for_server
from plates.server.launcher import free_port

# The key of the keyed gateway the tests start, or of the one --gateway-url names (scripts/test-image.sh sets it).
KEY = os.environ.get("PLATES_GATEWAY_KEY", "integration-gateway-key-5f1c0e")


@dataclass(frozen=True)
class Served:
    gateway: str  # the gateway's URL
    triton_http: str  # Triton's endpoints, host:port
    triton_grpc: str


@contextlib.contextmanager
def running_serve(log: Path) -> Iterator[Served]:
    """`plates serve` as a user runs it (no keys: its gateway on the loopback), ready; stopped with SIGTERM after."""
    http, grpc, gateway = free_port(), free_port(), free_port()
    command = [
        sys.executable,
        "-m",
        "plates.cli.main",
        "serve",
        "--http-port",
        str(http),
        "--grpc-port",
        str(grpc),
        "--metrics-port",
        str(free_port()),
        "--gateway-port",
        str(gateway),
    ]
    environ = {name: value for name, value in os.environ.items() if not name.startswith("PLATES_GATEWAY_")}
    # A file, not a pipe: Triton's own log could fill a pipe nobody reads.
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environ)
    try:
        wait_for_server(f"127.0.0.1:{http}", timeout=300, alive=lambda: process.poll() is None)
        url = f"http://127.0.0.1:{gateway}"
        wait_until_ready(url, process, log, timeout=120)
        yield Served(url, f"127.0.0.1:{http}", f"127.0.0.1:{grpc}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@contextlib.contextmanager
def running_gateway(triton_url: str, triton_grpc_url: str, log: Path, **variables: str) -> Iterator[str]:
    """A gateway whose settings are `variables` (ANONYMOUS_FROM="127.0.0.0/8" sets PLATES_GATEWAY_ANONYMOUS_FROM),
    ready: its URL. Stopped afterwards."""
    port = free_port()
    environ = {name: value for name, value in os.environ.items() if not name.startswith("PLATES_GATEWAY_")}
    environ.update({f"PLATES_GATEWAY_{name}": value for name, value in variables.items()})
    command = [
        sys.executable,
        "-m",
        "plates.cli.main",
        "gateway",
        "--port",
        str(port),
        "--triton-grpc",
        triton_grpc_url,
        "--triton-http",
        triton_url,
        "--health-interval",
        "1",
    ]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environ)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, process, log)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_ready(
    url: str, process: subprocess.Popen | None = None, log: Path | None = None, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None:
            assert process.poll() is None, f"the gateway exited with {process.returncode}: {log.read_text()[-2000:]}"
        try:
            if requests.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            # The gateway listens before it builds its application (a taken port fails at once): a request in the
            # listening socket's queue meanwhile times out. With a store, opening and migrating it takes a while.
            pass
        time.sleep(0.2)
    raise AssertionError(f"the gateway was not ready in {timeout} s: {log.read_text()[-2000:] if log else url}")
