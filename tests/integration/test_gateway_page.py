"""The page at `GET /`, as a person uses it: in a real headless Chromium (Debian's `chromium`, README prerequisites;
driven by Playwright, which downloads no browser of its own), a key typed in and car.jpg dropped on the page, its
plate drawn on the photo and read. Nothing is fetched from anywhere but the gateway."""

from __future__ import annotations

import base64
import shutil

import pytest
from playwright.sync_api import sync_playwright
from readings import CAR_PLATE

from .gateways import KEY

CHROMIUM = "/usr/bin/chromium"
# No network here, and nothing of the browser's own to fetch or sync; a container's /dev/shm (64 MiB) is too small
# for Chromium's shared memory, so it keeps it in /tmp.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
DROP = """([data, name]) => {
    const bytes = Uint8Array.from(atob(data), c => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], name, {type: "image/jpeg"}));
    document.getElementById("drop").dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true,
                                                                         cancelable: true}));
}"""
PIXEL = """([x, y]) => Array.from(document.getElementById("photo").getContext("2d").getImageData(x, y, 1, 1).data)"""


@pytest.fixture
def page(tmp_path):
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is not installed (README, Prerequisites: Debian's chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_a_person_drops_car_jpg_and_sees_its_plate_drawn_and_read(keyed_gateway, page, samples):
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(keyed_gateway + "/")
    assert "plates" in page.title() and page.locator("a[href='/docs']").count() == 1
    page.fill("#token", KEY)
    car = base64.b64encode((samples / "car.jpg").read_bytes()).decode()
    page.evaluate(DROP, [car, "car.jpg"])
    page.wait_for_selector("#photo[data-plates]", state="attached", timeout=30_000)
    assert page.eval_on_selector("#photo", "canvas => canvas.dataset.plates") == CAR_PLATE
    assert page.inner_text("#status").startswith("car.jpg: 1 plate read")
    assert CAR_PLATE in page.inner_text("#plates") and "Moscow" in page.inner_text("#plates")
    # The photo is drawn at its size, and the plate's box (94.5, 330.8)-(133.1, 342.7) in green on it.
    assert page.eval_on_selector("#photo", "canvas => [canvas.width, canvas.height]") == [780, 439]
    red, green, blue, alpha = page.evaluate(PIXEL, [94, 337])
    assert green > 200 and red < 60 and blue < 60 and alpha == 255
    assert page.evaluate(PIXEL, [400, 100])[3] == 255  # the photo itself, not a blank canvas
    assert all(url.startswith(keyed_gateway) or url.startswith("blob:") for url in requested), requested


def test_a_person_without_the_key_is_told_why(keyed_gateway, page, samples):
    page.goto(keyed_gateway + "/")
    car = base64.b64encode((samples / "car.jpg").read_bytes()).decode()
    page.evaluate(DROP, [car, "car.jpg"])
    page.wait_for_selector("#status.error", timeout=30_000)
    assert page.inner_text("#status") == "car.jpg: no API key: send the header 'Authorization: Token KEY' (401)"
