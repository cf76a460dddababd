"""API keys, the header checks, the body counter and the places in flight."""

from __future__ import annotations

import asyncio
import time

import pytest

from plates.gateway.auth import KeyRing, key_id
from plates.gateway.errors import Refusal
from plates.gateway.limits import BodyCounter, InFlight, check_headers


def refusal(call) -> tuple[int, str]:
    with pytest.raises(Refusal) as caught:
        call()
    return caught.value.status, caught.value.code


def test_keys_identify_a_request_by_a_hash_never_the_key():
    keys = KeyRing(["first-key", "second-key"])
    assert keys.identify(b"Token second-key") == key_id("second-key") != "second-key"
    assert keys.identify(b"token  first-key ") == key_id("first-key")
    assert len(key_id("first-key")) == 12


@pytest.mark.parametrize("header", [None, b"", b"Token", b"Token wrong", b"Bearer first-key", b"first-key"])
def test_keys_refuse_what_is_not_a_valid_token(header):
    assert refusal(lambda: KeyRing(["first-key"]).identify(header)) == (401, "unauthorized")


def test_no_keys_let_everyone_in():
    assert KeyRing([]).identify(None) is None


@pytest.mark.parametrize(
    "headers, expected",
    [
        ([(b"content-encoding", b"gzip")], (415, "content_encoding")),
        ([(b"content-encoding", b"identity")], (415, "content_encoding")),
        ([(b"transfer-encoding", b"gzip, chunked")], (501, "transfer_encoding")),
        ([(b"content-length", b"1001")], (413, "body_too_large")),
        ([(b"content-length", b"-1")], (400, "bad_content_length")),
    ],
)
def test_headers_that_say_the_request_cannot_be_served_are_refused(headers, expected):
    assert refusal(lambda: check_headers(headers, 1000)) == expected


def test_headers_within_the_limits_pass():
    check_headers([(b"content-length", b"1000"), (b"transfer-encoding", b"chunked")], 1000)


def test_body_counter_refuses_once_past_the_limit_and_knows_when_the_body_ended():
    messages = iter(
        [
            {"type": "http.request", "body": b"x" * 600, "more_body": True},
            {"type": "http.request", "body": b"x" * 400, "more_body": False},
        ]
    )

    async def receive():
        return next(messages)

    async def read(limit):
        counter = BodyCounter(receive, limit)
        while not counter.complete:
            await counter()
        return counter.received

    assert asyncio.run(read(1000)) == 1000
    messages = iter([{"type": "http.request", "body": b"x" * 600, "more_body": True}] * 2)
    assert refusal(lambda: asyncio.run(read(1000))) == (413, "body_too_large")


def test_in_flight_refuses_a_key_over_its_places_and_anyone_when_all_are_taken():
    places = InFlight(total=2, per_key=2, at_triton=2, wait_s=1.0)

    async def main():
        await places.admit("a"), await places.admit("a")
        with pytest.raises(Refusal) as caught:
            await places.admit("a")
        assert (caught.value.status, caught.value.code) == (429, "too_many_requests_for_key")
        async with places.photo(), places.photo():
            with pytest.raises(Refusal) as caught:
                await places.admit("b")
            assert (caught.value.status, caught.value.code) == (429, "too_many_requests")
            with pytest.raises(Refusal) as caught:
                async with places.photo():
                    pass
            assert (caught.value.status, caught.value.code) == (429, "too_many_requests")
        places.release("a")
        await places.admit("a"), await places.admit(None)

    asyncio.run(main())
    assert places.total == 0 and places.by_key == {"a": 2}


def test_a_key_that_sends_again_at_once_cannot_take_the_place_of_one_that_waits():
    """Two clients of one key with one place: the careless one sends again the moment it is answered; the one that
    waits gets the place at its next release, in its turn."""
    places = InFlight(total=8, per_key=1, at_triton=2, wait_s=1.0, hold_s=2.0)
    served = []

    async def client(name: str, times: int) -> None:
        for _ in range(times):
            await places.admit("k")
            served.append(name)
            await asyncio.sleep(0.02)
            places.release("k")

    async def main() -> None:
        careless = asyncio.create_task(client("careless", 6))
        await asyncio.sleep(0.01)
        await client("patient", 3)
        await careless

    asyncio.run(main())
    assert served == ["careless", "patient"] * 3 + ["careless"] * 3
    assert not places.queue and not places.by_key


def test_a_request_refused_after_its_wait_or_gone_while_waiting_leaves_no_place_taken():
    places = InFlight(total=8, per_key=1, at_triton=2, wait_s=1.0, hold_s=0.1, max_waiting=1)

    async def main() -> None:
        await places.admit("k")
        started = time.monotonic()
        waiter = asyncio.create_task(places.admit("k"))
        await asyncio.sleep(0.01)
        with pytest.raises(Refusal):  # one waits already: the next is refused at once
            await places.admit("k")
        assert time.monotonic() - started < 0.05
        with pytest.raises(Refusal) as caught:
            await waiter
        assert caught.value.code == "too_many_requests_for_key" and time.monotonic() - started >= 0.1
        gone = asyncio.create_task(places.admit("k"))
        await asyncio.sleep(0.01)
        gone.cancel()  # the client left
        await asyncio.gather(gone, return_exceptions=True)
        places.release("k")

    asyncio.run(main())
    assert not places.queue and not places.by_key


def test_photos_over_the_places_at_triton_wait_their_turn_in_order_and_no_longer_than_the_timeout():
    at_triton, most, order = 0, 0, []

    async def photo(places: InFlight, name: str, seconds: float) -> str:
        nonlocal at_triton, most
        async with places.photo():
            at_triton += 1
            most = max(most, at_triton)
            order.append(name)
            await asyncio.sleep(seconds)
            at_triton -= 1
        return name

    async def photos(places: InFlight, *sent: tuple[str, float]) -> list:
        """How many waited once all had arrived, then each one's name or refusal."""
        tasks = []
        for name, seconds in sent:
            tasks.append(asyncio.create_task(photo(places, name, seconds)))
            await asyncio.sleep(0.01)  # they arrive in this order
        waiting = places.waiting
        return [waiting, *await asyncio.gather(*tasks, return_exceptions=True)]

    async def main() -> None:
        patient = InFlight(total=8, per_key=8, at_triton=2, wait_s=30)
        waiting, *done = await photos(patient, ("a", 0.5), ("b", 0.5), ("c", 0.01), ("d", 0.01), ("e", 0.01))
        assert (waiting, done, order, most) == (3, ["a", "b", "c", "d", "e"], ["a", "b", "c", "d", "e"], 2)
        # Two hold Triton's places past the third's wait: it is refused, and no place is lost.
        hasty = InFlight(total=8, per_key=8, at_triton=2, wait_s=0.2)
        waiting, *done = await photos(hasty, ("a", 1.0), ("b", 1.0), ("c", 0.01))
        assert done[:2] == ["a", "b"]
        assert (done[2].status, done[2].code, done[2].retry_after) == (429, "queue_timeout", 1)
        assert (hasty.total, hasty.waiting) == (0, 0)
        assert (await photos(hasty, ("f", 0.01), ("g", 0.01), ("h", 0.01)))[1:] == ["f", "g", "h"]

    asyncio.run(main())
