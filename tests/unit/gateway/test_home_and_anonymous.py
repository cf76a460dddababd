"""`GET /` (the page for people, or JSON), keys' usage and quotas over HTTP, and the networks served without a key."""

from __future__ import annotations

import ipaddress
import re
import threading

import requests

from plates.gateway.auth import ANONYMOUS, KeyRing, key_id
from plates.gateway.settings import Settings

from .conftest import KEY, FakeTriton, photo

AUTH = {"Authorization": f"Token {KEY}"}
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def read(url: str, headers=AUTH) -> requests.Response:
    return requests.post(url + "/v1/plate-reader/", files={"upload": ("a.jpg", photo())}, headers=headers, timeout=10)


def test_the_page_is_served_whole_to_anyone_and_json_to_who_asks_for_it(gateway):
    with gateway() as url:
        page = requests.get(url + "/", timeout=10)
        about = requests.get(url + "/", headers={"Accept": "application/json"}, timeout=10)
        plain = requests.get(url, timeout=10)  # transfer.py's check: requests' own Accept, */*
    assert page.status_code == about.status_code == plain.status_code == 200
    assert page.headers["content-type"].startswith("text/html") and "<canvas" in page.text
    assert "connect-src 'self'" in page.headers["Content-Security-Policy"]
    # Nothing is fetched from elsewhere: no script, style or image with a URL of its own.
    assert not re.search(r"(src|href)=\"(https?:)?//", page.text)
    assert about.json()["docs"] == "/docs" and about.json()["version"] in page.text


def test_usage_is_counted_per_key_and_the_quota_refuses_with_their_403(gateway):
    other = "other-key-0123456789"
    settings = Settings(keys=(KEY, other), quotas=((KEY, 2),))
    with gateway(settings) as url:
        answers = [read(url) for _ in range(3)]
        others = read(url, {"Authorization": f"Token {other}"})
    assert [r.status_code for r in answers] == [201, 201, 403]
    assert [r.json()["usage"] for r in answers[:2]] == [{"calls": 1, "max_calls": 2}, {"calls": 2, "max_calls": 2}]
    refused = answers[2].json()
    assert refused["status_code"] == 403 and "quota" in refused["detail"]
    assert others.json()["usage"] == {"calls": 1, "max_calls": 0}


def test_keys_ring_lets_anonymous_networks_in_without_a_valid_key():
    keys = KeyRing([KEY], LOOPBACK)
    assert keys.identify(None, "127.0.0.1") == keys.identify(b"Token ", "127.0.0.2") == ANONYMOUS
    assert keys.identify(b"Token not-a-key", "::ffff:127.0.0.1") == ANONYMOUS
    assert keys.identify(f"Token {KEY}".encode(), "127.0.0.1") == key_id(KEY)
    assert keys.identify(f"Token {KEY}".encode(), "192.0.2.1") == key_id(KEY)
    for client in ("192.0.2.1", "::1", None, "not an address"):
        try:
            keys.identify(None, client)
        except Exception as error:
            assert getattr(error, "status", None) == 401
        else:
            raise AssertionError(f"{client} was let in without a key")


def test_requests_without_a_key_from_anonymous_networks_have_their_own_places(gateway):
    settings = Settings(keys=(KEY,), anonymous_from=LOOPBACK, max_in_flight_anonymous=1, wait_for_place=0.2)
    with gateway(settings, FakeTriton(delay=0.5)) as url:
        answers = [None] * 3

        def send(i: int) -> None:
            answers[i] = read(url, {} if i < 2 else AUTH)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(3)]
        [thread.start() for thread in threads]
        [thread.join() for thread in threads]
    assert sorted(r.status_code for r in answers[:2]) == [201, 429]  # one place without a key
    assert answers[2].status_code == 201  # a key has its own
    assert [r.json()["error"]["code"] for r in answers[:2] if r.status_code == 429] == ["too_many_requests_for_key"]


def test_the_schema_asks_for_the_key_this_gateway_asks_for(gateway):
    securities = {}
    for name, settings in {
        "open": Settings(),
        "keyed": Settings(keys=(KEY,)),
        "anonymous": Settings(keys=(KEY,), anonymous_from=LOOPBACK),
    }.items():
        with gateway(settings) as url:
            schema = requests.get(url + "/openapi.json", timeout=10).json()
        securities[name] = [
            schema["paths"][path]["post"].get("security")
            for path in ("/v1/plate-reader/", "/v1/vision/alpr", "/v1/image/alpr")
        ]
    assert securities == {"open": [None] * 3, "keyed": [[{"Token": []}]] * 3, "anonymous": [[{"Token": []}, {}]] * 3}
