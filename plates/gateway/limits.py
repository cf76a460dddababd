"""What a request may be and do, decided before its body is read where it can be, and while it is read where not.

A refusal never waits for the body: its size is judged from Content-Length when the client sends one, and by
counting the bytes as they arrive when it streams (chunked), so a body over the limit is refused once the limit is
passed, never after all of it has been buffered.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from plates.gateway.auth import ANONYMOUS
from plates.gateway.errors import RETRY_BUSY_S, Refusal

Receive = Callable[[], Awaitable[dict]]
PHOTO = object()  # what a photo whose upload is complete waits for: one of the places of all keys' photos


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
    """Photos accepted at once, over all keys, and requests per key.

    A request over either limit waits for a place in its turn, behind the requests of its key that came before it,
    for at most `hold_s` seconds, and is then refused (429). The wait is what a refusal costs: a timer, not a core.
    A client that ignores Retry-After and sends again the moment it is refused sends once a `hold_s`, not hundreds of
    times a second, and the cores stay with the answers; and the requests of one key take its places in the order
    they came, so a client that sends again at once cannot take a place from one that backed off
    (benchmarks/overload.py). At most `max_waiting` requests wait (each an open connection); more are refused at once.

    Of the photos accepted, at most `at_triton` are at Triton at once; the others wait their turn here, in the
    order they came, for at most `wait_s` seconds (then 429). Triton 2.51's queue that overflows idles the model
    behind it (docs/performance.md, The gateway): fed no more than it serves, it never refuses the gateway's photos
    and never stalls on them.

    A key's requests count from their headers to their answer, so a key that trickles its uploads blocks its own
    places only. The requests let in without a key (ANONYMOUS) share `anonymous` places, as one key's would. Photos
    count from the end of the body: uploads that trickle never hold a place. A request waits for its place before
    its body is read.
    """

    def __init__(
        self,
        total: int,
        per_key: int,
        at_triton: int,
        wait_s: float,
        anonymous: int | None = None,
        hold_s: float = 0.0,
        max_waiting: int = 1024,
    ) -> None:
        self.limit, self.per_key, self.wait_s = total, per_key, wait_s
        self.anonymous = per_key if anonymous is None else anonymous
        self.hold_s, self.max_waiting = hold_s, max_waiting
        self.total = 0  # photos accepted: at Triton or waiting their turn
        self.waiting = 0  # ... of which waiting
        self.by_key: Counter[str] = Counter()
        self.turns = asyncio.Semaphore(at_triton)
        self.queue: deque[tuple[str | None, asyncio.Future]] = deque()  # requests waiting for a place, in order

    async def admit(self, key: str | None) -> None:
        """A request whose headers arrived: a place of its key's taken for it, once there is one in its turn."""
        await self._place(key)

    async def _place(self, wanted: str | None | object) -> None:
        """A place of `wanted` (a key's, or PHOTO: one of the photos accepted at once) taken, at once where it fits
        and no request of the same kind waits, else in its turn within `hold_s`; else a Refusal."""
        if self._fits(wanted) and not any(kind == wanted for kind, _ in self.queue):
            self._take(wanted)
            return
        if self.hold_s <= 0 or len(self.queue) >= self.max_waiting:
            raise self._refusal(wanted)
        entry = (wanted, asyncio.get_running_loop().create_future())
        self.queue.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(entry[1]), self.hold_s)
        except asyncio.TimeoutError:  # TimeoutError from 3.11, its own class on 3.10
            if not entry[1].done():
                entry[1].cancel()
                self.queue.remove(entry)
                raise self._refusal(wanted) from None
            # Given a place as the time ran out: it is this request's.
        except asyncio.CancelledError:  # the client left while it waited
            if entry[1].done() and not entry[1].cancelled():
                self._give_back(wanted)
            else:
                entry[1].cancel()
                self.queue.remove(entry)
            raise

    def release(self, key: str | None) -> None:
        self._give_back(key)

    def _give_back(self, wanted: str | None | object) -> None:
        if wanted is PHOTO:
            self.total -= 1
        elif wanted is not None:
            self.by_key[wanted] -= 1
            if not self.by_key[wanted]:
                del self.by_key[wanted]
        self._wake()

    def _limit_of(self, key: str) -> int:
        return self.anonymous if key == ANONYMOUS else self.per_key

    def _fits(self, wanted: str | None | object) -> bool:
        if self.total >= self.limit:
            return False
        return wanted is None or wanted is PHOTO or self.by_key[wanted] < self._limit_of(wanted)

    def _take(self, wanted: str | None | object) -> None:
        if wanted is PHOTO:
            self.total += 1
        elif wanted is not None:
            self.by_key[wanted] += 1

    def _wake(self) -> None:
        """Hand the places free now to the requests waiting for them, first come first: a request whose key has no
        place free is passed over, not waited behind."""
        for entry in list(self.queue):
            key, future = entry
            if self._fits(key):
                self.queue.remove(entry)
                self._take(key)
                future.set_result(None)

    def _refusal(self, key: str | None | object) -> Refusal:
        if key is PHOTO or self.total >= self.limit:
            return self._total_refusal()
        whose = "requests without an API key" if key == ANONYMOUS else "requests of this API key"
        return Refusal(
            429,
            "too_many_requests_for_key",
            f"{self._limit_of(key)} {whose} are in flight: send the next when one is answered",
            retry_after=RETRY_BUSY_S,
        )

    @asynccontextmanager
    async def photo(self) -> AsyncIterator[None]:
        """A place at Triton for a photo whose upload is complete, once its turn comes."""
        await self._place(PHOTO)
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
            self._give_back(PHOTO)

    def _total_refusal(self) -> Refusal:
        return Refusal(
            429, "too_many_requests", f"{self.limit} photos are being read: try again shortly", retry_after=RETRY_BUSY_S
        )
