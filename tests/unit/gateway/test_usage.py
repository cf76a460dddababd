"""Photos read per key this month, against its quota: counted once read, refused with 403 past the quota."""

from __future__ import annotations

import pytest

from plates.gateway.auth import ANONYMOUS
from plates.gateway.errors import Refusal
from plates.gateway.usage import Usage


def test_calls_are_counted_per_key_and_the_quota_refuses_with_403():
    usage = Usage({"key-a": 2})
    with usage.call("key-a") as first, usage.call("key-b") as other:
        pass
    with usage.call("key-a") as second:
        pass
    assert (first.calls, first.max_calls, second.calls, other.calls, other.max_calls) == (1, 2, 2, 1, 0)
    with pytest.raises(Refusal) as refused:
        with usage.call("key-a"):
            pass
    assert (refused.value.status, refused.value.code) == (403, "quota_exceeded")
    assert usage.calls["key-a"] == 2


def test_a_photo_that_is_not_read_is_not_counted():
    usage = Usage({"key-a": 1})
    with pytest.raises(Refusal):
        with usage.call("key-a"):
            raise Refusal(429, "too_many_requests", "busy")
    with usage.call("key-a") as calls:
        pass
    assert calls.calls == 1


def test_photos_in_flight_at_once_cannot_pass_the_quota_together():
    usage = Usage({"key-a": 1})
    with usage.call("key-a"):
        with pytest.raises(Refusal):
            with usage.call("key-a"):
                pass


def test_counts_start_again_each_month_and_open_requests_count_as_anonymous():
    month = [(2026, 11)]
    usage = Usage({ANONYMOUS: 1}, month=lambda: month[0])
    with usage.call(None):
        month[0] = (2026, 12)  # the month ends while this photo is read: its count was last month's
    with usage.call(None) as calls:
        pass
    assert calls.calls == 1
