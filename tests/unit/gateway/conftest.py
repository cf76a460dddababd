"""A gateway app on a real loopback socket (uvicorn in a thread, with the gateway's own protocol), in front of a fake
Triton: the app's behaviour, over HTTP as clients see it, without a server."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import cv2
import numpy as np
import pytest
import uvicorn

from plates.client.health import HealthReport, ModelHealth
from plates.gateway.app import create_app
from plates.gateway.server import uvicorn_config
from plates.gateway.settings import Settings

KEY = "test-key-0123456789"
HEALTHY = HealthReport((ModelHealth("plate_recognition", True, "ok", 0.01),))
# car.jpg's plate as plate_recognition answers it, and a plate found but not read.
OUTPUTS = {
    "coordinates": np.array([[94.6, 330.4, 132.5, 343.3], [10.2, 20.7, 50.0, 30.0]], np.float32),
    "texts": np.array([b"B840CK197", b""], dtype=np.object_),
    "scores": np.array([0.6296, 0.41], np.float32),
    "text_scores": np.array([0.7076, 0.0], np.float32),
    "candidates": np.array([[b"B840CK197", b"B840OK197"], [b"MAF1A77", b""]], dtype=np.object_),
    "candidate_scores": np.array([[0.7076, 0.2236], [0.008, 0.0]], np.float32),
}


class FakeResult:
    def __init__(self, outputs: dict) -> None:
        self.outputs = outputs

    def as_numpy(self, name: str) -> np.ndarray:
        return self.outputs[name]


class FakeTriton:
    """tritonclient.grpc.aio's `infer`: answers OUTPUTS, or raises `error` (to the first `failures` calls; to all
    when None), after `delay` seconds."""

    def __init__(self, error: Exception | None = None, delay: float = 0.0, failures: int | None = None) -> None:
        self.error, self.delay, self.failures = error, delay, failures
        self.photos: list[bytes] = []
        self.at_once = self.most_at_once = 0  # photos being read, and the most at any moment

    async def infer(self, model, inputs, outputs, client_timeout):
        assert model == "plate_recognition" and inputs[0].name() == "image_bytes"
        self.photos.append(inputs[0])
        self.at_once += 1
        self.most_at_once = max(self.most_at_once, self.at_once)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.at_once -= 1
        if self.error is not None and (self.failures is None or len(self.photos) <= self.failures):
            raise self.error
        return FakeResult(OUTPUTS)


def photo(extension: str = ".jpg", size: tuple[int, int] = (64, 48)) -> bytes:
    pixels = np.full((size[1], size[0], 3), 128, np.uint8)
    return cv2.imencode(extension, pixels)[1].tobytes()


@contextlib.contextmanager
def serving(settings: Settings, triton: FakeTriton | None = None, health=lambda url: HEALTHY):
    """The gateway of `settings` on 127.0.0.1 (on a port of its own, whatever settings.port says): its base URL."""
    app = create_app(settings, triton=triton or FakeTriton(), health_check=health)
    server = uvicorn.Server(uvicorn_config(settings, app))
    listener = socket.create_server(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, "the gateway did not start"
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()


@pytest.fixture
def gateway():
    """`with gateway(Settings(...), triton) as url:` a served gateway; keys=(KEY,) unless the settings say else."""

    def serve(settings: Settings | None = None, triton: FakeTriton | None = None, **kwargs):
        return serving(settings or Settings(keys=(KEY,)), triton, **kwargs)

    return serve
