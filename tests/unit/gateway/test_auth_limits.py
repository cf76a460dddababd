"""API keys, the header checks, the body counter and the places in flight."""

from __future__ import annotations

import asyncio

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
    messages = iter([{"type": "http.request", "body": b"x" * 600, "more_body": True},
                     {"type": "http.request", "body": b"x" * 400, "more_body": False}])  # fmt: skip

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


def test_in_flight_refuses_a_key_over_its_places_and_anyone_when_triton_is_full():
    places = InFlight(total=2, per_key=2)
    places.admit("a"), places.admit("a")
    assert refusal(lambda: places.admit("a")) == (429, "too_many_requests_for_key")
    with places.photo(), places.photo():
        assert refusal(lambda: places.admit("b")) == (429, "too_many_requests")
        assert refusal(lambda: places.photo().__enter__()) == (429, "too_many_requests")
    places.release("a")
    places.admit("a"), places.admit(None)
    assert places.total == 0 and places.by_key == {"a": 2}
