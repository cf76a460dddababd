"""`plates serve` as a user runs it: ready, prints its URLs, serves the gateway, stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from readings import CAR_PLATE

from plates.client.gateway import GatewayClient
from plates.client.readiness import is_ready, wait_for_server
from plates.exceptions import ServerUnavailableError
from plates.server.launcher import LocalServer, free_port


def wait_for_text(path: Path, text: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)


def test_serve_prints_its_urls_serves_the_gateway_and_stops_cleanly_on_sigterm(request, tmp_path, samples):
    if request.config.getoption("--triton-url"):
        pytest.skip("tests the local launcher; a server was given with --triton-url")
    http, gateway = free_port(), free_port()
    ports = [
        "--http-port",
        str(http),
        "--grpc-port",
        str(free_port()),
        "--metrics-port",
        str(free_port()),
        "--gateway-port",
        str(gateway),
    ]
    log = tmp_path / "serve.log"  # a file, not a pipe: Triton's own log could fill a pipe nobody reads yet
    with log.open("w") as stdout:
        process = subprocess.Popen([sys.executable, "-m", "plates.cli.main", "serve", *ports], stdout=stdout)
        try:
            wait_for_server(f"localhost:{http}", timeout=300, alive=lambda: process.poll() is None)
            # The launcher polls readiness on its own schedule: the server can be ready before it says so.
            wait_for_text(log, "Ctrl-C stops it.", process, timeout=60)
            # Without keys, on the loopback: anyone there may call it.
            with GatewayClient(f"127.0.0.1:{gateway}", timeout=30) as client:
                answer = client.read((samples / "car.jpg").read_bytes(), "car.jpg")
            assert [result["text"] for result in answer["results"]] == [CAR_PLATE]
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    output = log.read_text()
    assert f"Triton is ready at http://localhost:{http}" in output
    assert f"The gateway serves http://127.0.0.1:{gateway}/v1/plate-reader/" in output
    assert process.returncode == 0
    assert not is_ready(f"localhost:{http}")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{gateway}/healthz", timeout=5)


def test_serve_refuses_to_open_the_gateway_beyond_the_loopback_without_keys(monkeypatch):
    monkeypatch.delenv("PLATES_GATEWAY_KEYS", raising=False)
    monkeypatch.delenv("PLATES_GATEWAY_KEYS_FILE", raising=False)
    done = subprocess.run(
        [sys.executable, "-m", "plates.cli.main", "serve", "--host", "0.0.0.0", "--http-port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 78, done
    assert done.stderr.strip() == (
        "error: refusing to listen on 0.0.0.0 without API keys: set PLATES_GATEWAY_KEYS or --keys-file, or listen on "
        "127.0.0.1"
    )


def test_serve_on_a_port_already_in_use_says_which_and_exits_69():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "plates.cli.main",
                "serve",
                "--http-port",
                str(port),
                "--grpc-port",
                str(free_port()),
                "--metrics-port",
                str(free_port()),
                "--gateway-port",
                "0",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 69, done
    assert done.stderr.strip() == f"error: cannot serve on 127.0.0.1: port already in use (http {port})"


def test_a_server_that_exits_before_it_is_ready_is_named_with_tritons_own_reason(tmp_path):
    log = tmp_path / "tritonserver.log"
    server = LocalServer(tmp_path / "no-repository", free_port(), free_port(), free_port(), log_file=log)
    with pytest.raises(ServerUnavailableError) as raised:
        server.start(timeout=60)
    assert str(raised.value) == (
        f"tritonserver for {server.url} exited with code 1 before it was ready: creating server: Internal - failed to "
        f"stat file {tmp_path / 'no-repository'}"
    )
