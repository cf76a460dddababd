"""CodeProject.AI's licence plate reader over HTTP, as their clients call it: the answer's shape, the first file of the
form whatever its name, min_confidence, their error shape, and the status routes recorders poll."""

from __future__ import annotations

import pytest
import requests
from tritonclient.utils import InferenceServerException

from plates.client.gateway import GatewayClient
from plates.exceptions import InvalidInputError
from plates.gateway.settings import Settings

from .conftest import KEY, FakeTriton, photo

AUTH = {"Authorization": f"Token {KEY}"}


def alpr(url: str, files=None, data=None, headers=AUTH, path="/v1/vision/alpr") -> requests.Response:
    files = {"upload": ("car.jpg", photo())} if files is None else files
    return requests.post(url + path, files=files, data=data, headers=headers, timeout=10)


def test_an_answer_in_their_modules_shape_on_both_routes(gateway):
    with gateway() as url:
        vision = alpr(url)
        legacy = alpr(url, files={"image": ("image", photo())}, path="/v1/image/alpr")  # their Python client's field
    assert vision.status_code == legacy.status_code == 200
    body = vision.json()
    assert body == legacy.json() | {"processMs": body["processMs"], "inferenceMs": body["inferenceMs"]}
    assert body["success"] is True and body["count"] == 1 and body["message"] == "Found Plate: B840CK197"
    assert body["predictions"] == [
        {
            "confidence": pytest.approx(0.7076),
            "label": "Plate: B840CK197",
            "plate": "B840CK197",
            "x_min": 95,
            "y_min": 330,
            "x_max": 132,
            "y_max": 343,
        }
    ]
    assert isinstance(body["processMs"], int) and isinstance(body["inferenceMs"], int)
    assert (body["moduleId"], body["command"], body["code"]) == ("ALPR", "alpr", 200)


def test_min_confidence_leaves_out_the_plates_detected_below_it(gateway):
    # The fake's plate: detected at 0.6296, read at 0.7076. The bar is the detector's, as their YOLO11 module's is.
    with gateway() as url:
        kept = alpr(url, data={"min_confidence": "0.62"}).json()
        left_out = alpr(url, data={"min_confidence": "0.63"}).json()
        wrong = alpr(url, data={"min_confidence": "high"})
        empty = alpr(url, data={"min_confidence": ""})  # not left out: the schema says a number
    assert kept["count"] == 1 and kept["predictions"][0]["confidence"] == pytest.approx(0.7076)
    assert (left_out["count"], left_out["predictions"], left_out["message"]) == (0, [], "No plates found")
    assert wrong.status_code == empty.status_code == 400 and "min_confidence" in wrong.json()["error"]


def test_errors_are_theirs_success_false_and_error(gateway):
    busy = InferenceServerException("Exceeds maximum queue size", status="StatusCode.UNAVAILABLE")
    with gateway(Settings(keys=(KEY,), queue_timeout=0.1), FakeTriton(busy)) as url:
        answers = {
            "no key": alpr(url, headers={}),
            "no file": alpr(url, files={}, data={"min_confidence": "0.5"}),
            "not a photo": alpr(url, files={"image": ("a.jpg", b"GIF89a" + bytes(100))}),
            "busy": alpr(url),
            "unknown route": requests.post(url + "/v1/vision/detection", headers=AUTH, timeout=10),
        }
    statuses = {name: (r.status_code, r.json()["error_code"]) for name, r in answers.items()}
    assert statuses == {
        "no key": (401, "unauthorized"),
        "no file": (400, "missing_upload"),
        "not a photo": (400, "invalid_request"),
        "busy": (429, "triton_busy"),
        "unknown route": (404, "not_found"),
    }
    for response in answers.values():
        body = response.json()
        assert body["success"] is False and body["code"] == response.status_code and body["error"]
    assert answers["not a photo"].json()["error"].startswith("image is not a JPEG or PNG")


@pytest.mark.parametrize("prefix", ["/v1/status", "/v1/server/status"])
def test_the_status_routes_recorders_poll_answer_without_a_key(gateway, prefix):
    with gateway() as url:
        ping, version, update = (
            requests.get(f"{url}{prefix}/{route}", timeout=10) for route in ("ping", "version", "updateavailable")
        )
    assert ping.status_code == version.status_code == update.status_code == 200
    assert ping.json()["success"] is True and ping.json()["version"]["major"] >= 0
    assert update.json()["updateAvailable"] is False


def test_the_projects_client_reads_through_either_api_and_names_their_errors(gateway):
    with gateway() as url:
        with GatewayClient(url, KEY, api="codeproject") as client:
            answer = client.read(photo())
        with GatewayClient(url, api="codeproject") as client, pytest.raises(InvalidInputError) as refused:
            client.read(photo())
    assert answer["predictions"][0]["plate"] == "B840CK197"
    assert str(refused.value) == "gateway answered 401: no API key: send the header 'Authorization: Token KEY'"
