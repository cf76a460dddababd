"""What a request may be and do, decided before its body is read where it can be, and while it is read where not.

A refusal never waits for the body: its size is judged from Content-Length when the client sends one, and by
counting the bytes as they arrive when it streams (chunked), so a body over the limit is refused once the limit is
passed, never after all of it has been buffered.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from plates.gateway.auth import ANONYMOUS
from plates.gateway.errors import RETRY_BUSY_S, Refusal

Receive = Callable[[], Awaitable[dict]]


def check_headers(headers: list[tuple[bytes, bytes]], max_body_bytes: int) -> None:
    """Refuse a request whose headers already say that it cannot be served: any content coding (a compressed body
    inflates past every limit that counts the bytes sent), a transfer coding other than chunked, or a declared body
    over the limit."""
    for name, value in headers:
        if name == b"content-encoding":
            raise Refusal(
                415,
                "content_encoding",
                f"Content-Encoding {value[:40].decode('latin-1')!r} is refused: send the body as it is, uncompressed",
            )
        if name == b"transfer-encoding" and value.strip().lower() not in (b"chunked", b"identity"):
            raise Refusal(501, "transfer_encoding", "only the chunked transfer coding is accepted")
        if name == b"content-length":
            if not value.strip().isdigit():
                raise Refusal(400, "bad_content_length", "Content-Length must be a number of bytes")
            if int(value) > max_body_bytes:
                raise Refusal(413, "body_too_large", body_too_large(max_body_bytes))


def body_too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes ({limit / 2**20:g} MiB)"


class BodyCounter:
    """`receive` that refuses the request (413) as soon as more than `limit` bytes of body have arrived."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self.receive = receive
        self.limit = limit
        self.received = 0
        self.complete = False  # the whole body has arrived

    async def __call__(self) -> dict:
        message = await self.receive()
        self.received += len(message.get("body", b""))
        if self.received > self.limit:
            raise Refusal(413, "body_too_large", body_too_large(self.limit))
        self.complete = message["type"] == "http.request" and not message.get("more_body", False)
        return message


class InFlight:
    """Photos accepted at once, over all keys, and requests per key: one over either limit is refused (429) at once,
    so a client that floods waits on its own retries, not in front of everyone else's requests.

    Of the photos accepted, at most `at_triton` are at Triton at once; the others wait their turn here, in the
    order they came, for at most `wait_s` seconds (then 429). Triton 2.51's queue that overflows idles the model
    behind it (docs/performance.md, The gateway): fed no more than it serves, it never refuses the gateway's photos
    and never stalls on them.

    A key's requests count from their headers to their answer, so a key that trickles its uploads blocks its own
    places only. The requests let in without a key (ANONYMOUS) share `anonymous` places, as one key's would. Photos
    count from the end of the body: uploads that trickle never hold a place. When all places are taken as a request
    arrives, it is refused at once, before its body is sent.
    """

    def __init__(self, total: int, per_key: int, at_triton: int, wait_s: float, anonymous: int | None = None) -> None:
        self.limit, self.per_key, self.wait_s = total, per_key, wait_s
        self.anonymous = per_key if anonymous is None else anonymous
        self.total = 0  # photos accepted: at Triton or waiting their turn
        self.waiting = 0  # ... of which waiting
        self.by_key: Counter[str] = Counter()
        self.turns = asyncio.Semaphore(at_triton)

    def admit(self, key: str | None) -> None:
        """A request whose headers arrived: refused if all places are taken, or its key's."""
        self._check_total()
        if key is not None:
            limit = self.anonymous if key == ANONYMOUS else self.per_key
            if self.by_key[key] >= limit:
                whose = "requests without an API key" if key == ANONYMOUS else "requests of this API key"
                raise Refusal(
                    429,
                    "too_many_requests_for_key",
                    f"{limit} {whose} are in flight: send the next when one is answered",
                    retry_after=RETRY_BUSY_S,
                )
            self.by_key[key] += 1

    def release(self, key: str | None) -> None:
        if key is not None:
            self.by_key[key] -= 1
            if not self.by_key[key]:
                del self.by_key[key]

    @asynccontextmanager
    async def photo(self) -> AsyncIterator[None]:
        """A place at Triton for a photo whose upload is complete, once its turn comes."""
        self._check_total()
        self.total += 1
        try:
            self.waiting += 1
            try:
                await asyncio.wait_for(self.turns.acquire(), self.wait_s)
            except asyncio.TimeoutError:  # TimeoutError from 3.11, its own class on 3.10
                raise Refusal(
                    429,
                    "queue_timeout",
                    f"waited {self.wait_s:g} s for the recognizer: try again shortly",
                    retry_after=RETRY_BUSY_S,
                ) from None
            finally:
                self.waiting -= 1
            try:
                yield
            finally:
                self.turns.release()
        finally:
            self.total -= 1

    def _check_total(self) -> None:
        if self.total >= self.limit:
            raise Refusal(
                429,
                "too_many_requests",
                f"{self.limit} photos are being read: try again shortly",
                retry_after=RETRY_BUSY_S,
            )
