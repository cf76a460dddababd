"""Shared fixtures: where the sample data lives, the --triton-url option of the integration tests, a webhook receiver,
clients sending car.jpg without pause."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

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
    parser.addoption("--kube-engine", help="podman, with its options, for podman kube play (default: --engine)")


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


@pytest.fixture
def http_server():
    """`http_server(Handler)`: a BaseHTTPRequestHandler class served on 127.0.0.1 from a thread, as "127.0.0.1:PORT";
    shut down after the test."""
    servers = []

    def start(handler: type[BaseHTTPRequestHandler]) -> str:
        servers.append(ThreadingHTTPServer(("127.0.0.1", 0), handler))
        threading.Thread(target=servers[-1].serve_forever, daemon=True).start()
        return f"127.0.0.1:{servers[-1].server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


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


CAR_PLATE = "B840CK197"


@dataclass(frozen=True)
class Answer:
    sent: float  # time.monotonic() when the request left
    kind: str  # "right" (car.jpg's plate read), "wrong", "refused", "restarting", "no server" or "failed"
    message: str


class CarLoad:
    """`clients` threads each sending car.jpg, one request after another without pause, every answer kept.

    Requests are not retried: a refused thread pauses as PlatesClient would before its retry (as `plates bench`
    does), and a thread whose connection is refused pauses 0.1 s, so that a server restarting on a 2-core machine
    gets its CPU rather than a stream of connection attempts.
    """

    def __init__(self, url: str, photo: bytes, clients: int) -> None:
        self.url, self.photo = url, photo
        self.answers: list[Answer] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._send, daemon=True) for _ in range(clients)]
        for thread in self.threads:
            thread.start()

    def _send(self) -> None:
        from plates.client import PlatesClient
        from plates.exceptions import OverloadedError, PlatesError, RestartingError, ServerUnavailableError
        from plates.retry import NO_RETRY, RetryPolicy

        backoff, refusals = RetryPolicy(), 0
        with PlatesClient(self.url, timeout=10, retry=NO_RETRY) as client:
            while not self.stopping.is_set():
                sent = time.monotonic()
                try:
                    texts = [plate.text for plate in client.recognize(self.photo)]
                    answer, pause = Answer(sent, "right" if CAR_PLATE in texts else "wrong", str(texts)), 0.0
                except OverloadedError as error:
                    answer, pause = Answer(sent, "refused", str(error)), backoff.pause(refusals)
                except RestartingError as error:
                    answer, pause = Answer(sent, "restarting", str(error)), 0.0
                except ServerUnavailableError as error:
                    answer, pause = Answer(sent, "no server", str(error)), 0.1
                except PlatesError as error:
                    answer, pause = Answer(sent, "failed", str(error)), 0.0
                except Exception as error:  # a thread that died would lower the load unseen: record it instead
                    answer, pause = Answer(sent, "failed", f"{type(error).__name__}: {error}"), 0.1
                refusals = refusals + 1 if answer.kind == "refused" else 0
                self.answers.append(answer)
                self.stopping.wait(pause)

    def since(self, moment: float) -> list[Answer]:
        return [answer for answer in list(self.answers) if answer.sent >= moment]

    def first_right_since(self, moment: float, within_s: float, context: Callable[[], str] = str) -> float:
        """When the first request sent since `moment` that read car.jpg right was sent; fails after `within_s`,
        saying what the clients met and `context()` (a log's tail)."""
        while not (right := [answer.sent for answer in self.since(moment) if answer.kind == "right"]):
            met = Counter(answer.kind for answer in self.since(moment))
            assert time.monotonic() - moment < within_s, f"car.jpg not read right in {within_s} s: {met}\n{context()}"
            time.sleep(0.2)
        return min(right)  # answers come in the order they end, not the order they were sent

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)


@pytest.fixture
def car_load(samples):
    """`car_load(url, clients=4)`: a CarLoad on the server at `url`, stopped after the test."""
    loads = []

    def start(url: str, clients: int = 4) -> CarLoad:
        loads.append(CarLoad(url, (samples / "car.jpg").read_bytes(), clients))
        return loads[-1]

    yield start
    for load in loads:
        load.stop()
