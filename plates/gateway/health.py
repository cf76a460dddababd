"""/readyz: the last answer of the deep health check (plates.client.health), run in a thread every few seconds.

A probe request would wait behind photos at a busy server, so /readyz never runs one itself: it answers at once
with what the last check found. The check is the traffic-aware one the supervisor runs, which skips the probes of
models that have served requests since the last check without failing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from plates.client.health import PROBE_TIMEOUT_S, PROBES, HealthReport, TrafficAwareCheck

log = logging.getLogger("plates.gateway")

Check = Callable[[str], HealthReport]


class HealthWatch:
    def __init__(self, url: str, interval: float, check: Check | None = None) -> None:
        self.url = url
        self.interval = interval
        # A probe's timeout is how long a live model may keep it waiting behind photos, not how often to check.
        self.check = check or TrafficAwareCheck(timeout=PROBE_TIMEOUT_S)
        self.report: HealthReport | None = None
        self.checked_at = 0.0  # time.monotonic() of the last check's end

    async def run(self) -> None:
        """Check now and every `interval` seconds, until cancelled."""
        while True:
            try:
                report = await asyncio.to_thread(self.check, self.url)
            except Exception:  # a bug in the check: /readyz turns stale (503), and the traceback says why
                log.exception("the health check of Triton at %s failed", self.url)
            else:
                if self.report is None or report.healthy != self.report.healthy:
                    log.log(
                        logging.INFO if report.healthy else logging.WARNING,
                        "Triton at %s: %s",
                        self.url,
                        report.summary(),
                    )
                self.report, self.checked_at = report, time.monotonic()
            await asyncio.sleep(self.interval)

    def reloading(self) -> list[str]:
        """The models the last check says the supervisor is loading again."""
        return [] if self.report is None else self.report.reloading

    def readiness(self) -> tuple[bool, dict]:
        """Ready or not, and why, as /readyz answers it."""
        if self.report is None:
            return False, {"ready": False, "reason": f"no health check of Triton at {self.url} has finished yet"}
        age = time.monotonic() - self.checked_at
        if age > 3 * self.interval + len(PROBES) * PROBE_TIMEOUT_S:  # 3 periods and a timed-out probe per model
            return False, {"ready": False, "reason": f"the last health check of Triton ended {age:.0f} s ago"}
        models = [{"model": m.model, "healthy": m.healthy, "detail": m.detail} for m in self.report.models]
        body = {"ready": self.report.healthy, "checked_s_ago": round(age, 1), "models": models}
        if not self.report.healthy:
            body["reason"] = self.report.summary()
        if self.reloading():
            body["reloading"] = self.reloading()
        return self.report.healthy, body
