"""Shared fixtures: where the sample data lives, the --triton-url option of the integration tests, a webhook receiver."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
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
    parser.addoption(
        "--triton-grpc-url",
        default=os.environ.get("PLATES_TRITON_GRPC_URL"),
        help="the gRPC endpoint of the --triton-url server (default: its HTTP port + 1, as Triton's 8000 and 8001)",
    )
    parser.addoption(
        "--gateway-url",
        default=os.environ.get("PLATES_GATEWAY_URL"),
        help="attack this running plates gateway (its key in $PLATES_GATEWAY_KEY) instead of starting one",
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


class Receiver:
    """An HTTP receiver on 127.0.0.1 that answers 500 to its first `failures` POSTs, then 200."""

    def __init__(self, failures: int = 0) -> None:
        self.bodies, self.failures = [], failures
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if receiver.failures:
                    receiver.failures -= 1
                    self.send_response(500)
                else:
                    receiver.bodies.append(json.loads(body))
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/events"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_receiver():
    """`webhook_receiver(failures=0)`: a Receiver on 127.0.0.1, shut down after the test."""
    receivers = []

    def start(failures: int = 0) -> Receiver:
        receivers.append(Receiver(failures))
        return receivers[-1]

    yield start
    for receiver in receivers:
        receiver.close()
