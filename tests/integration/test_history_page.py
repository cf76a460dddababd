"""The history's page at `/history`, as an operator uses it, in a real headless Chromium (Playwright, Debian's
chromium): a car's photos at the entrance and the exit sent as a camera would, its plate searched as typed in
Cyrillic, its visit opened, a read corrected, the plate it made merged back and labelled. With
PLATES_SCREENSHOT=PATH it leaves a screenshot there (the README's picture of the page)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest
import requests
from playwright.sync_api import expect
from readings import CAR_PLATE

from .gateways import KEY
from .test_gateway_page import page  # noqa: F401 (the fixture)


def snapshot(gateway: str, samples, camera: str, timestamp: str) -> None:
    answer = requests.post(
        f"{gateway}/v1/plate-reader/",
        files={"upload": ("car.jpg", (samples / "car.jpg").read_bytes())},
        data={"camera_id": camera, "timestamp": timestamp},
        headers={"Authorization": f"Token {KEY}"},
        timeout=60,
    )
    assert answer.status_code == 201, answer.text


def test_an_operator_searches_opens_a_visit_corrects_a_read_and_merges_plates(keyed_gateway, page, samples):  # noqa: F811
    if "/v1/history/reads" not in requests.get(f"{keyed_gateway}/openapi.json", timeout=30).text:
        pytest.skip("the gateway under test keeps no store (--gateway-url, the image's): scripts/test.sh runs this")
    # Two hours ago, not a fixed day: a visit left open for a day is closed as absent (the store's check of visits),
    # so a fixed date turned this visit "absent" the day after it was written.
    entered = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=2)
    snapshot(keyed_gateway, samples, "page-in", entered.strftime("%Y-%m-%dT%H:%M:%SZ"))
    snapshot(keyed_gateway, samples, "page-out", (entered + timedelta(minutes=80)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(keyed_gateway + "/history")
    page.fill("#token", KEY)
    page.dispatch_event("#token", "change")
    expect(page.locator("#status")).to_contain_text(" reads", timeout=30_000)  # the recent reads, with the key
    page.fill("#plate", "в840ск197")  # as a person types it, in Cyrillic
    page.fill("#camera", "page-out")
    page.click("#search button[type=submit]")
    expect(page.locator("#title")).to_have_text(f"Reads near в840ск197: {CAR_PLATE}", timeout=30_000)
    rows = page.locator("#reads tbody tr")
    expect(rows).to_have_count(1)
    assert CAR_PLATE in rows.first.inner_text() and "out" in rows.first.inner_text()
    # The plate's page: its two reads and its one visit, 80 minutes.
    rows.first.locator("a").click()
    expect(page.locator("#title")).to_contain_text(f"Plate {CAR_PLATE}", timeout=30_000)
    expect(page.locator("#status")).to_contain_text("2 reads, 1 visits", timeout=30_000)
    visit = page.locator("#visits tbody tr").first.inner_text()
    assert "left" in visit and visit.endswith("80"), visit
    if os.environ.get("PLATES_SCREENSHOT"):
        page.set_viewport_size({"width": 1100, "height": 900})
        page.screenshot(path=os.environ["PLATES_SCREENSHOT"], full_page=True)
    # A correction: the prompt answered as a person would, and the read's plate is the typed one after it.
    page.once("dialog", lambda dialog: dialog.accept("A001AA77"))
    page.locator("#reads tbody tr").first.locator("button.correct").click()
    expect(page.locator("#status")).to_contain_text("is A001AA77 now", timeout=30_000)
    # That was wrong: A001AA77 is the car after all. Merged back from its plate's page, reads and visit follow.
    page.fill("#plate", "A001AA77")
    page.fill("#camera", "")
    page.click("#search button[type=submit]")
    expect(page.locator("#title")).to_have_text("Reads near A001AA77: A001AA77", timeout=30_000)
    page.locator("#reads tbody tr").first.locator("a").click()
    expect(page.locator("#status")).to_contain_text("1 reads, 1 visits", timeout=30_000)
    page.once("dialog", lambda dialog: dialog.accept(CAR_PLATE))
    page.click("#merge")
    expect(page.locator("#status")).to_have_text(f"A001AA77 is {CAR_PLATE} now: 2 reads, 1 visits", timeout=30_000)
    page.once("dialog", lambda dialog: dialog.accept("Ivanov, flat 12"))
    page.click("#describe")
    expect(page.locator("#title")).to_contain_text(f"Plate {CAR_PLATE} (Ivanov, flat 12)", timeout=30_000)
    assert all(url.startswith(keyed_gateway) or url.startswith("blob:") for url in requested), requested
