"""One client per thread, for callers that send requests from several threads (bench, watch).

Neither a tritonclient HTTP client nor a requests session is meant to be shared between threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from plates.client.retry import RetryPolicy
from plates.client.service import Plate, PlatesClient

C = TypeVar("C")


class PerThread(Generic[C]):
    """`client()` gives this thread's client, made by `make()` on its first call; close() closes them all."""

    def __init__(self, make: Callable[[], C]) -> None:
        self._make = make
        self._local = threading.local()
        self._clients: list[C] = []
        self._lock = threading.Lock()

    def client(self) -> C:
        if not hasattr(self._local, "client"):
            self._local.client = self._make()
            with self._lock:
                self._clients.append(self._local.client)
        return self._local.client

    def close(self) -> None:
        with self._lock:
            for client in self._clients:
                client.close()
            self._clients.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadLocalClients(PerThread[PlatesClient]):
    """`recognize(image)` from any thread; `with ThreadLocalClients(url) as clients:` closes them all."""

    def __init__(self, url: str, timeout: float = 60.0, retry: RetryPolicy = RetryPolicy()) -> None:
        super().__init__(lambda: PlatesClient(url, timeout, retry))

    def recognize(self, image: bytes | np.ndarray) -> list[Plate]:
        return self.client().recognize(image)
