"""The gateway with a store: a Snapshot request that names a camera is remembered, and the history's routes answer
searches, visits, corrections and crops behind the keys, and refuse hostile input with a clear 400."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
import requests
import simplejpeg

from plates.gateway.settings import Settings
from plates.store.database import Store

from .conftest import KEY, photo, serving

AUTH = {"Authorization": f"Token {KEY}"}


@pytest.fixture
def gateway(tmp_path):
    crops = tmp_path / "crops"
    (crops / "2026-11-28").mkdir(parents=True)
    (crops / "2026-11-28" / ("a" * 32 + ".jpg")).write_bytes(b"\xff\xd8\xff\xe0crop")
    settings = Settings(
        keys=(KEY,),
        store=str(tmp_path / "site.db"),
        store_crops=str(crops),
        camera_roles=(("gate-in", "entrance"), ("gate-out", "exit")),
    )
    with serving(settings) as url:
        yield url


def snapshot(url: str, camera: str, timestamp: str) -> dict:
    form = {"camera_id": camera, "timestamp": timestamp}
    # As large as car.jpg's box in the fake answer needs: the writer cuts each plate's crop from the photo.
    upload = {"upload": ("car.jpg", photo(size=(200, 400)))}
    answer = requests.post(f"{url}/v1/plate-reader/", files=upload, data=form, headers=AUTH)
    assert answer.status_code == 201, answer.text
    return answer.json()


def ago(minutes: float) -> str:
    """A Snapshot timestamp `minutes` before now: the live gateway closes visits open past its 24 h absent timer, so a
    fixed date would age out of these tests."""
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def wait_for_reads(url: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 10
    while True:
        reads = requests.get(f"{url}/v1/history/reads", headers=AUTH).json()["reads"]
        if len(reads) >= count or time.monotonic() > deadline:
            return reads
        time.sleep(0.05)


def test_photos_that_name_a_camera_make_reads_and_a_visit(gateway):
    snapshot(gateway, "gate-in", ago(120))
    snapshot(gateway, "gate-out", ago(45))
    snapshot(gateway, "", ago(40))  # no camera: not remembered
    reads = wait_for_reads(gateway, 2)
    assert [(r["camera_id"], r["plate"], r["direction"]) for r in reads] == [
        ("gate-out", "B840CK197", "out"),
        ("gate-in", "B840CK197", "in"),
    ]
    visits = requests.get(f"{gateway}/v1/history/visits", headers=AUTH).json()
    assert [(v["plate"], v["state"], v["dwell_minutes"]) for v in visits] == [("B840CK197", "left", 75.0)]
    crop = requests.get(f"{gateway}/v1/history/crops/{reads[0]['crop']}", headers=AUTH)
    assert crop.status_code == 200 and crop.headers["content-type"] == "image/jpeg"
    # The box (94.6, 330.4)-(132.5, 343.3) with a tenth of its height around it.
    assert simplejpeg.decode_jpeg_header(crop.content)[:2] == (16, 41)
    csv_text = requests.get(f"{gateway}/v1/history/reads.csv?plate=B84OCK197", headers=AUTH).text
    assert csv_text.splitlines()[0].startswith("id,seen_at,camera_id,plate") and len(csv_text.splitlines()) == 3


def test_a_correction_and_the_plates_page(gateway):
    snapshot(gateway, "gate-in", ago(120))
    read = wait_for_reads(gateway, 1)[0]
    answer = requests.post(
        f"{gateway}/v1/history/reads/{read['id']}/correction", json={"text": "в 840 ск 197"}, headers=AUTH
    )
    assert answer.status_code == 200 and answer.json()["text"] == "B840CK197"
    answer = requests.post(
        f"{gateway}/v1/history/reads/{read['id']}/correction", json={"text": "A001AA77"}, headers=AUTH
    )
    plate = requests.get(f"{gateway}/v1/history/plates/{answer.json()['plate_id']}", headers=AUTH).json()
    assert plate["text"] == "A001AA77" and [v["plate"] for v in plate["visits"]] == ["A001AA77"]


def test_the_history_needs_the_key_but_its_page_does_not(gateway):
    assert requests.get(f"{gateway}/v1/history/reads").status_code == 401
    page = requests.get(f"{gateway}/history")
    assert page.status_code == 200 and "The site's history" in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/history/reads?plate=" + "x" * 10_000,
        "/v1/history/reads?plate=%27%20OR%201%3D1%20--",
        "/v1/history/reads?plate=%22%3B%20DROP%20TABLE%20reads%3B%20--",
        "/v1/history/reads?since=yesterday",
        "/v1/history/reads?limit=0",
        "/v1/history/reads?max_distance=99",
        "/v1/history/counts?by=week",
    ],
)
def test_hostile_searches_are_a_clear_400_and_the_gateway_keeps_serving(gateway, path):
    answer = requests.get(gateway + path, headers=AUTH)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_request", answer.text
    assert len(answer.json()["error"]["message"]) < 200
    assert requests.get(f"{gateway}/v1/history/reads", headers=AUTH).status_code == 200


def test_crops_are_served_by_their_names_and_nothing_else(gateway):
    good = requests.get(f"{gateway}/v1/history/crops/2026-11-28/{'a' * 32}.jpg", headers=AUTH)
    assert good.status_code == 200 and good.content.startswith(b"\xff\xd8")
    for bad in ("..%2F..%2Fsite.db", "2026-11-28%2F..%2F..%2Fsite.db", f"2026-11-28/{'b' * 32}.jpg"):
        assert requests.get(f"{gateway}/v1/history/crops/{bad}", headers=AUTH).status_code == 404


def test_the_store_a_gateway_made_opens_at_its_schema(tmp_path):
    with serving(Settings(store=str(tmp_path / "site.db"))):
        pass
    assert Store(str(tmp_path / "site.db")).revision() == "0002"


def test_an_unknown_query_parameter_is_refused_by_name(gateway):
    answer = requests.get(f"{gateway}/v1/history/reads?plates=B840CK197", headers=AUTH)
    assert answer.status_code == 400 and "unknown query parameter 'plates'" in answer.json()["error"]["message"]
