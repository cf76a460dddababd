"""Photos read per key this month, against the key's optional monthly quota: Plate Recognizer's `usage`.

Their answers carry `usage: {calls, max_calls}`, and clients read it (Home Assistant's integration shows the calls
remaining, `max_calls - calls`, after every scan of a server other than their cloud). Past the quota their API answers
403, which their clients report as such. Counts live in the gateway's memory: they start again at 0 each calendar
month (UTC), as their plans do, and when the gateway restarts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

from plates.gateway.auth import ANONYMOUS
from plates.gateway.errors import Refusal

NO_QUOTA = 0  # `max_calls` of a key without a quota: a number, since clients subtract `calls` from it


@dataclass(frozen=True)
class Calls:
    calls: int  # this photo included
    max_calls: int


def this_month() -> tuple[int, int]:
    now = datetime.now(timezone.utc)
    return now.year, now.month


class Usage:
    """`with usage.call(key) as calls:` counts a photo for `key` (a key id, ANONYMOUS, or None where the gateway is
    open); refused with 403 past the key's quota. A photo that is not read is not counted."""

    def __init__(self, quotas: Mapping[str, int], month: Callable[[], tuple[int, int]] = this_month) -> None:
        self.quotas = dict(quotas)  # key id -> photos a month
        self.month = month
        self._counted_month = month()
        self.calls: Counter[str] = Counter()

    @contextmanager
    def call(self, key: str | None) -> Iterator[Calls]:
        key = key or ANONYMOUS
        month = self.month()
        if month != self._counted_month:
            self._counted_month, self.calls = month, Counter()
        quota = self.quotas.get(key, NO_QUOTA)
        if quota and self.calls[key] >= quota:
            raise Refusal(
                403,
                "quota_exceeded",
                f"this API key has used its quota of {quota} calls this month: no "
                "more photos are read for it until the next month begins (UTC)",
            )
        # Counted before the photo is read, so that the key's photos in flight at once cannot pass the quota together.
        counted = self.calls  # a new month may begin before this photo is answered: its refund is last month's
        counted[key] += 1
        try:
            yield Calls(counted[key], quota)
        except BaseException:
            counted[key] -= 1
            raise
