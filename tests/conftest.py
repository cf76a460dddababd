"""Shared fixtures: where the sample data lives, the --triton-url option of the integration tests, a webhook receiver,
clients sending car.jpg without pause, convert/'s scripts as modules."""

from __future__ import annotations

import importlib
import json
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path

import pytest
from readings import CAR_PLATE

from plates.build.paths import PROJECT_ROOT, shared_dir

SHARED = shared_dir()
SAMPLES = SHARED / "data" / "samples"


@pytest.fixture
def ctrl_c_raises():
    """Python's own SIGINT handler, as at a terminal: a shell that starts the tests in the background without job
    control has them ignore SIGINT, and the processes they start with them, and the tests would wait forever for
    their Ctrl-C. A handler (unlike an ignored signal) is not inherited: a child process gets Python's own too."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


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


@pytest.fixture
def verdict_dir(tmp_path_factory, monkeypatch) -> Path:
    """A folder of its own for the supervisor's verdicts, as the health check reads them."""
    from plates.client.health import VERDICT_DIR_VARIABLE

    folder = tmp_path_factory.mktemp("verdicts")
    monkeypatch.setenv(VERDICT_DIR_VARIABLE, str(folder))
    return folder


@pytest.fixture(scope="session")
def samples() -> Path:
    if not (SAMPLES / "car.jpg").is_file():
        pytest.fail(f"sample photos not found in {SAMPLES}; set PLATES_SHARED_DIR to the shared/ folder")
    return SAMPLES


@pytest.fixture
def convert_script(monkeypatch) -> Callable[[str], object]:
    """Import a script of convert/ (a folder of scripts, not a package) by its name: by name, not from its path, so
    that the worker processes a script starts can import it again."""
    monkeypatch.syspath_prepend(str(PROJECT_ROOT / "convert"))
    return importlib.import_module


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


@dataclass(frozen=True)
class Answer:
    sent: float  # time.monotonic() when the request left
    answered: float  # and when its answer came
    kind: str  # "right" (car.jpg's plate read), "wrong", "refused", "reloading", "unavailable" or "failed"
    message: str


def answer_kind(error: Exception) -> str:
    """What a client met, by its error: PlatesClient's and GatewayClient's errors, or tritonclient's over gRPC, read as
    the gateway reads them (plates.gateway.recognizer.triton_refusal)."""
    from tritonclient.utils import InferenceServerException

    from plates.exceptions import RELOADING, OverloadedError, ServerUnavailableError
    from plates.gateway.recognizer import triton_refusal

    if isinstance(error, InferenceServerException):
        code = triton_refusal(error, timeout=10).code
        return {"triton_busy": "refused", "triton_reloading": "reloading", "triton_unavailable": "unavailable"}.get(
            code, "failed"
        )
    if RELOADING in str(error):  # plates.client.service.ReloadingError, or the gateway's 503 triton_reloading
        return "reloading"
    if isinstance(error, OverloadedError):
        return "refused"
    if isinstance(error, ServerUnavailableError):
        return "unavailable"
    return "failed"


@contextmanager
def car_reader(kind: str, url: str) -> Iterator[Callable[[bytes], list[str]]]:
    """read(photo) -> the texts of its plates, as a client of `kind` reads them at `url`, over one connection kept:
    "http" PlatesClient (Triton's HTTP), "grpc" tritonclient.grpc (Triton's gRPC), "gateway" GatewayClient (the
    Snapshot API, with $PLATES_GATEWAY_KEY where set). No request is retried."""
    if kind == "http":
        from plates.client.retry import NO_RETRY
        from plates.client.service import PlatesClient

        with PlatesClient(url, timeout=10, retry=NO_RETRY) as client:
            yield lambda photo: [plate.text for plate in client.recognize(photo)]
    elif kind == "grpc":
        import numpy as np
        import tritonclient.grpc as grpcclient

        client = grpcclient.InferenceServerClient(url)

        def read(photo: bytes) -> list[str]:
            tensor = grpcclient.InferInput("image_bytes", [1], "BYTES")
            tensor.set_data_from_numpy(np.array([photo], dtype=np.object_))
            result = client.infer(
                "plate_recognition", [tensor], outputs=[grpcclient.InferRequestedOutput("texts")], client_timeout=10
            )
            return [text.decode() for text in result.as_numpy("texts")]

        try:
            yield read
        finally:
            client.close()
    elif kind == "gateway":
        from plates.client.gateway import GatewayClient

        # The key of a gateway that asks for one (scripts/test-image.sh exports it for the tests).
        with GatewayClient(url, os.environ.get("PLATES_GATEWAY_KEY"), timeout=10) as client:
            yield lambda photo: [result["text"] for result in client.read(photo)["results"]]
    else:
        raise ValueError(f"no client kind {kind!r}")


class CarLoad:
    """`clients` threads each sending car.jpg through a client of `kind` (car_reader), one request after another,
    every answer kept.

    Requests are not retried. With `pauses`, a refused thread pauses as PlatesClient would before its retry (as
    `plates bench` does), and a thread that finds no server pauses 0.1 s, so that a server restarting on a 2-core
    machine gets its CPU rather than a stream of connection attempts; without, every thread sends again at once, as
    the clients of issue 38 did. `pause_s` paces a thread between requests (0: none).
    """

    def __init__(
        self, url: str, photo: bytes, clients: int, kind: str = "http", pauses: bool = True, pause_s: float = 0.0
    ) -> None:
        self.url, self.photo, self.kind, self.pauses, self.pause_s = url, photo, kind, pauses, pause_s
        self.answers: list[Answer] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._send, daemon=True) for _ in range(clients)]
        for thread in self.threads:
            thread.start()

    def _send(self) -> None:
        from plates.client.retry import RetryPolicy

        backoff, refusals = RetryPolicy(), 0
        with car_reader(self.kind, self.url) as read:
            while not self.stopping.is_set():
                sent = time.monotonic()
                try:
                    texts = read(self.photo)
                    kind, message, pause = "right" if CAR_PLATE in texts else "wrong", str(texts), 0.0
                except Exception as error:  # a thread that died would lower the load unseen: record it instead
                    kind, message = answer_kind(error), f"{type(error).__name__}: {error}"
                    pauses = {"refused": backoff.pause(refusals), "unavailable": 0.1} if self.pauses else {}
                    pause = pauses.get(kind, 0.0)
                refusals = refusals + 1 if kind == "refused" else 0
                self.answers.append(Answer(sent, time.monotonic(), kind, message))
                self.stopping.wait(max(pause, self.pause_s))

    def since(self, moment: float) -> list[Answer]:
        return [answer for answer in list(self.answers) if answer.sent >= moment]

    def first_right_since(self, moment: float, within_s: float, context: Callable[[], str] = str) -> Answer:
        """The first answer that read car.jpg right to a request sent since `moment` (the first to come); fails
        after `within_s`, saying what the clients met and `context()` (a log's tail)."""
        while not (right := [answer for answer in self.since(moment) if answer.kind == "right"]):
            met = Counter(answer.kind for answer in self.since(moment))
            assert time.monotonic() - moment < within_s, f"car.jpg not read right in {within_s} s: {met}\n{context()}"
            time.sleep(0.05)
        return min(right, key=lambda answer: answer.answered)

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)


@pytest.fixture
def car_load(samples):
    """`car_load(url, clients=4, kind="http", pauses=True)`: a CarLoad on the server at `url`, stopped after the
    test."""
    loads = []

    def start(url: str, clients: int = 4, kind: str = "http", pauses: bool = True) -> CarLoad:
        loads.append(CarLoad(url, (samples / "car.jpg").read_bytes(), clients, kind, pauses))
        return loads[-1]

    yield start
    for load in loads:
        load.stop()
