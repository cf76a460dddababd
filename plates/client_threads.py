"""One PlatesClient per thread, for callers that send requests from several threads (bench, watch).

A tritonclient HTTP client is not meant to be shared between threads.
"""

from __future__ import annotations

import threading

import numpy as np

from plates.client import Plate, PlatesClient
from plates.retry import RetryPolicy


class ThreadLocalClients:
    """`recognize(image)` from any thread; `with ThreadLocalClients(url) as clients:` closes them all."""

    def __init__(self, url: str, timeout: float = 60.0, retry: RetryPolicy = RetryPolicy()) -> None:
        self.url, self.timeout, self.retry = url, timeout, retry
        self._local = threading.local()
        self._clients: list[PlatesClient] = []
        self._lock = threading.Lock()

    def client(self) -> PlatesClient:
        """This thread's client, made on its first call."""
        if not hasattr(self._local, "client"):
            self._local.client = PlatesClient(self.url, self.timeout, self.retry)
            with self._lock:
                self._clients.append(self._local.client)
        return self._local.client

    def recognize(self, image: bytes | np.ndarray) -> list[Plate]:
        return self.client().recognize(image)

    def close(self) -> None:
        with self._lock:
            for client in self._clients:
                client.close()
            self._clients.clear()

    def __enter__(self) -> "ThreadLocalClients":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
