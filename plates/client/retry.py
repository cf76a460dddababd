"""Trying a request again when the server refused it as overloaded: a bounded number of times, within a deadline,
after exponentially growing pauses with jitter.

The jitter is "full jitter" (a pause drawn uniformly between 0 and the exponential bound): clients refused by the
same burst then come back spread out instead of as the same burst again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from plates.exceptions import InvalidInputError, OverloadedError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    tries: int = 4  # in all, the first one included
    first_pause_s: float = 0.1
    max_pause_s: float = 2.0

    def __post_init__(self) -> None:
        if self.tries < 1 or self.first_pause_s < 0 or self.max_pause_s < 0:
            raise InvalidInputError(f"a retry policy needs tries >= 1 and pauses >= 0, got {self}")

    def pause(self, retry: int, draw: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number `retry` (0 for the first retry); `draw()` is uniform in [0, 1)."""
        return draw() * min(self.max_pause_s, self.first_pause_s * 2**retry)


NO_RETRY = RetryPolicy(tries=1)
# For work that must be done whole (a video file, a batch): keeps trying for about a minute of pauses.
PATIENT = RetryPolicy(tries=60, first_pause_s=0.1, max_pause_s=1.0)


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    draw: Callable[[], float] = random.random,
) -> T:
    """`call()`, tried again while it raises OverloadedError, at most `policy.tries` times in all and never
    pausing past `timeout_s` from now; then OverloadedError saying how often and for how long it was refused."""
    start = clock()
    for retry in range(policy.tries):
        try:
            return call()
        except OverloadedError as error:
            refusal = error
        pause = policy.pause(retry, draw)
        if retry + 1 == policy.tries or clock() + pause - start >= timeout_s:
            break
        sleep(pause)
    raise OverloadedError(
        f"{refusal}; refused {retry + 1} time{'s' if retry else ''} in {clock() - start:.1f} s, try later"
    )
