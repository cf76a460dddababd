"""The gateway over HTTP, as Plate Recognizer's clients call it: answers, refusals, operations."""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time

import requests
from tritonclient.utils import InferenceServerException

from plates.client.health import HealthReport, ModelHealth
from plates.gateway.settings import Settings

from .conftest import KEY, FakeTriton, photo

AUTH = {"Authorization": f"Token {KEY}"}
OTHER_KEY = "other-key-0123456789"
PATH = "/v1/plate-reader/"
FORM_HEAD = b"--b\r\nContent-Disposition: form-data; name=upload; filename=a.jpg\r\n\r\n"


def post(url: str, files=None, data=None, headers=AUTH, **kwargs) -> requests.Response:
    files = {"upload": ("car.jpg", photo())} if files is None else files
    return requests.post(url + PATH, files=files, data=data, headers=headers, timeout=10, **kwargs)


def error_of(response: requests.Response) -> dict:
    body = response.json()
    assert body["detail"] == body["error"]["message"]  # their clients read `detail` and `status_code`
    assert body["status_code"] == response.status_code
    assert body["error"]["request_id"] == response.headers["X-Request-ID"]
    return body["error"]


def test_reading_answers_in_plate_recognizers_shape_with_ours_beside(gateway):
    with gateway() as url:
        response = post(
            url,
            data={
                "camera_id": "gate-1",
                "timestamp": "2019-08-19T13:11:25",
                "regions": ["ru", "by"],
                "config": '{"mode": "fast", "text_formats": []}',
                "mmc": "False",
            },
        )
    assert response.status_code == 201
    body = response.json()
    assert body["camera_id"] == "gate-1" and body["timestamp"] == "2019-08-19T13:11:25.000000Z"
    assert body["filename"] == "car.jpg" and body["version"] == 1
    assert (body["image_width"], body["image_height"]) == (64, 48)
    assert isinstance(body["processing_time"], float)
    [result] = body["results"]
    assert result["plate"] == "b840ck197" and result["text"] == "B840CK197"
    assert result["box"] == {"xmin": 95, "ymin": 330, "xmax": 132, "ymax": 343}
    assert result["region"] == {"code": "ru", "score": result["score"]}
    assert result["candidates"][0] == {"plate": "b840ck197", "score": result["score"]}
    assert result["subject"] == {"code": "197", "name": "Moscow"}
    assert result["vehicle"] == {"score": 0.0, "type": "Unknown", "box": {"xmin": 0, "ymin": 0, "xmax": 0, "ymax": 0}}
    [unread] = body["unread"]
    assert unread["candidates"] == [{"plate": "maf1a77", "score": 0.008}] and unread["dscore"] > 0.4
    assert body["usage"] == {"calls": 1, "max_calls": 0}


def test_reading_takes_the_path_without_its_slash_a_png_and_base64(gateway):
    with gateway() as url:
        png = requests.post(url + PATH.rstrip("/"), files={"upload": ("a.png", photo(".png"))}, headers=AUTH)
        text = post(url, files={"upload": (None, base64.b64encode(photo()).decode())})
    assert png.status_code == 201 and png.json()["filename"] == "a.png"
    assert text.status_code == 201 and text.json()["filename"] is None


def test_timestamp_defaults_to_now_in_their_format(gateway):
    with gateway() as url:
        stamp = post(url).json()["timestamp"]
    assert len(stamp) == len("2020-10-12T16:17:27.574008Z") and stamp.endswith("Z")


def test_keys_are_required_when_set(gateway):
    with gateway() as url:
        missing = post(url, headers={})
        wrong = post(url, headers={"Authorization": "Token nope"})
        bearer = post(url, headers={"Authorization": f"Bearer {KEY}"})
    for response in (missing, wrong, bearer):
        assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Token"
        assert error_of(response)["code"] == "unauthorized"


def test_without_keys_anyone_on_the_loopback_is_served(gateway):
    with gateway(Settings()) as url:
        assert post(url, headers={}).status_code == 201


def test_refusals_name_their_cause(gateway):
    triton = FakeTriton()
    with gateway(Settings(keys=(KEY,), max_body_bytes=50_000), triton) as url:
        answers = {
            "upload_url": post(url, files={}, data={"upload_url": "http://169.254.169.254/"}),
            "no upload": post(url, files={}, data={"camera_id": "c"}),
            "not a photo": post(url, files={"upload": ("a.jpg", b"GIF89a" + bytes(100))}),
            "cut": post(url, files={"upload": ("a.jpg", photo()[:-10])}),
            "bad timestamp": post(url, data={"timestamp": "yesterday"}),
            "gzip": post(url, headers={**AUTH, "Content-Encoding": "gzip"}),
            "json": requests.post(url + PATH, json={"upload": "x"}, headers=AUTH),
            "large": post(url, files={"upload": ("a.jpg", bytes(60_000))}),
            "not base64": post(url, files={"upload": (None, "not base64!")}),
            "two files": post(url, files=[("upload", ("a.jpg", photo())), ("other", ("b.jpg", photo()))]),
        }
    codes = {name: (r.status_code, error_of(r)["code"]) for name, r in answers.items()}
    assert codes == {
        "upload_url": (400, "upload_url_refused"),
        "no upload": (400, "missing_upload"),
        "not a photo": (400, "invalid_request"),
        "cut": (400, "invalid_request"),
        "bad timestamp": (400, "invalid_request"),
        "gzip": (415, "content_encoding"),
        "json": (415, "not_a_form"),
        "large": (413, "body_too_large"),
        "not base64": (400, "invalid_upload"),
        "two files": (400, "invalid_form"),
    }
    assert "fetches no URLs" in answers["upload_url"].json()["detail"]
    assert answers["cut"].json()["detail"] == "upload is a truncated JPEG: it ends before its end-of-image marker"
    assert not triton.photos  # none of them reached Triton


def test_a_streamed_body_over_the_limit_is_refused_and_its_connection_closed(gateway):
    def body():  # chunked: no Content-Length to judge it by
        yield FORM_HEAD
        for _ in range(100):
            yield bytes(10_000)

    headers = {**AUTH, "Content-Type": "multipart/form-data; boundary=b"}
    with gateway(Settings(keys=(KEY,), max_body_bytes=50_000)) as url:
        response = requests.post(url + PATH, data=body(), headers=headers)
    assert response.status_code == 413 and error_of(response)["code"] == "body_too_large"
    assert response.headers["Connection"] == "close"  # the rest of the body is never read as a request


def test_gzip_of_a_gzip_never_reaches_the_form(gateway):
    with gateway() as url:
        bomb = gzip.compress(bytes(10**7))  # 10 KB that would be 10 MB
        response = requests.post(url + PATH, data=bomb, headers={**AUTH, "Content-Encoding": "gzip"})
    assert response.status_code == 415


def test_tritons_errors_keep_their_meaning(gateway):
    cases = {
        "StatusCode.INVALID_ARGUMENT": ("plate_recognition: image_bytes is a truncated PNG", 400, "invalid_image"),
        "StatusCode.UNAVAILABLE": ("Exceeds maximum queue size", 429, "triton_busy"),
        "StatusCode.DEADLINE_EXCEEDED": ("Deadline Exceeded", 504, "triton_timeout"),
        "StatusCode.INTERNAL": ("model 'yolo' failed: boom", 502, "triton_failed"),
    }
    for status, (message, http_status, code) in cases.items():
        triton = FakeTriton(InferenceServerException(message, status=status))
        with gateway(Settings(keys=(KEY,), queue_timeout=0.2), triton) as url:
            response = post(url)
        assert (response.status_code, error_of(response)["code"]) == (http_status, code)
    assert response.json()["detail"] == "plate_recognition failed: model 'yolo' failed: boom"


def test_triton_down_is_503_and_busy_is_429_both_with_retry_after(gateway):
    down = InferenceServerException("failed to connect to all addresses", status="StatusCode.UNAVAILABLE")
    busy = InferenceServerException("Exceeds maximum queue size", status="StatusCode.UNAVAILABLE")
    down_triton = FakeTriton(down)
    with gateway(triton=down_triton) as url:
        unavailable = post(url)
    busy_triton = FakeTriton(busy)
    with gateway(Settings(keys=(KEY,), queue_timeout=0.3), busy_triton) as url:
        started = time.monotonic()
        refused = post(url)
        waited = time.monotonic() - started
    assert unavailable.status_code == 503 and int(unavailable.headers["Retry-After"]) > 0
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert "server rejected" not in unavailable.json()["detail"]
    # Busy was tried again until the queue timeout, down was not.
    assert len(busy_triton.photos) > 2 and 0.1 < waited < 5 and len(down_triton.photos) == 1


def test_a_photo_triton_refuses_as_busy_is_sent_again_until_it_is_read(gateway):
    busy = InferenceServerException("Exceeds maximum queue size", status="StatusCode.UNAVAILABLE")
    triton = FakeTriton(busy, failures=3)
    with gateway(triton=triton) as url:
        response = post(url)
    assert response.status_code == 201 and len(triton.photos) == 4


def test_an_invalid_image_says_so_in_the_clients_terms(gateway):
    message = "plate_recognition: image_bytes is a corrupt or truncated JPEG: bad"
    error = InferenceServerException(message, status="StatusCode.INVALID_ARGUMENT")
    with gateway(triton=FakeTriton(error)) as url:
        response = post(url)
    assert response.json()["detail"] == "upload is a corrupt or truncated JPEG: bad"


def parallel(count: int, call) -> list:
    """`call(i)` for i in range(count), all at once."""
    results = [None] * count

    def run(i: int) -> None:
        results[i] = call(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    [thread.start() for thread in threads]
    [thread.join() for thread in threads]
    return results


def test_photos_over_the_limits_wait_for_a_place_then_are_refused_with_retry_after(gateway):
    settings = Settings(keys=(KEY, OTHER_KEY), max_in_flight=3, max_in_flight_per_key=2, wait_for_place=0.2)
    keys = [AUTH, {"Authorization": f"Token {OTHER_KEY}"}]
    with gateway(settings, FakeTriton(delay=0.5)) as url:
        one_key = parallel(4, lambda i: post(url))
        two_keys = parallel(4, lambda i: post(url, headers=keys[i % 2]))
    assert sorted(r.status_code for r in one_key) == [201, 201, 429, 429]
    refused = [r for r in one_key if r.status_code == 429]
    assert {error_of(r)["code"] for r in refused} == {"too_many_requests_for_key"}
    assert refused[0].headers["Retry-After"] == "1"
    # Held for their wait before they hear it: a client that sends again at once sends once a wait.
    assert all(r.elapsed.total_seconds() >= 0.2 for r in refused)
    # 2 per key fit, but only 3 photos at once: one of the four is refused for the total.
    assert sorted(r.status_code for r in two_keys) == [201, 201, 201, 429]
    assert [error_of(r)["code"] for r in two_keys if r.status_code == 429] == ["too_many_requests"]


def test_a_request_over_its_keys_places_is_served_when_a_place_frees_within_its_wait(gateway):
    with gateway(Settings(keys=(KEY,), max_in_flight_per_key=2, wait_for_place=2.0), FakeTriton(delay=0.3)) as url:
        answers = parallel(4, lambda i: post(url))
    assert [r.status_code for r in answers] == [201] * 4
    assert sorted(round(r.elapsed.total_seconds(), 1) >= 0.5 for r in answers) == [False, False, True, True]


def test_a_client_that_ignores_retry_after_cannot_take_the_place_of_one_that_backs_off(gateway):
    """Two clients of one key with one place, for 3 s: one sends again the moment it is answered or refused, the
    other waits out every Retry-After. Served in their turn, the patient one gets its share."""
    served = {"careless": 0, "patient": 0}
    until = time.monotonic() + 3

    def client(name: str) -> None:
        while time.monotonic() < until:
            answer = post(url)
            if answer.status_code == 201:
                served[name] += 1
            elif name == "patient":
                time.sleep(float(answer.headers["Retry-After"]))

    settings = Settings(keys=(KEY,), max_in_flight_per_key=1, wait_for_place=1.0)
    with gateway(settings, FakeTriton(delay=0.1)) as url:
        threads = [threading.Thread(target=client, args=(name,)) for name in served]
        [thread.start() for thread in threads]
        [thread.join() for thread in threads]
    assert served["patient"] >= 0.4 * sum(served.values()), served


def test_photos_beyond_the_places_at_triton_wait_their_turn_instead_of_reaching_it(gateway):
    triton = FakeTriton(delay=0.2)
    with gateway(Settings(max_at_triton=2), triton) as url:
        answers = parallel(5, lambda i: post(url))
    assert [r.status_code for r in answers] == [201] * 5
    assert (len(triton.photos), triton.most_at_once) == (5, 2)


def test_healthz_readyz_and_metrics(gateway):
    down = HealthReport((ModelHealth("plate_recognition", False, "model 'yolo' failed: stub died", 0.01),))
    with gateway() as url:
        post(url), post(url, headers={})
        alive = requests.get(url + "/healthz")
        ready = requests.get(url + "/readyz")
        metrics = requests.get(url + "/metrics").text
    with gateway(health=lambda url: down) as url:
        not_ready = requests.get(url + "/readyz")
    assert alive.status_code == 200 and alive.json() == {"alive": True}
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert not_ready.status_code == 503 and "yolo" in not_ready.json()["reason"]
    assert 'plates_gateway_requests_total{route="/v1/plate-reader/",status="201"} 1.0' in metrics
    assert 'plates_gateway_refusals_total{cause="unauthorized"} 1.0' in metrics
    assert "plates_gateway_in_flight 0.0" in metrics and "plates_gateway_waiting 0.0" in metrics
    assert "plates_gateway_models_reloading 0.0" in metrics
    assert "plates_gateway_request_seconds_bucket" in metrics


def test_a_model_that_reloads_is_a_503_counted_as_reloading_and_readyz_and_metrics_say_so(gateway):
    reloading = HealthReport((ModelHealth("yolo", False, "reloading: the stub of yolo (pid 7) exited", 0.0),))
    said = "plate_recognition: the service is reloading model 'yolo' (Stub process 'yolo_0_0' is not healthy.)"
    triton = FakeTriton(InferenceServerException(said, status="StatusCode.UNAVAILABLE"))
    with gateway(triton=triton, health=lambda url: reloading) as url:
        refused = post(url)
        ready = requests.get(url + "/readyz")
        metrics = requests.get(url + "/metrics").text
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "2"
    assert error_of(refused)["code"] == "triton_reloading" and error_of(refused)["message"] == said
    assert ready.status_code == 503 and ready.json()["reloading"] == ["yolo"]
    assert ready.json()["reason"] == "unhealthy: yolo: reloading: the stub of yolo (pid 7) exited"
    assert 'plates_gateway_refusals_total{cause="triton_reloading"} 1.0' in metrics
    assert "plates_gateway_models_reloading 1.0" in metrics


def test_request_ids_are_kept_when_sane_and_made_otherwise(gateway):
    with gateway() as url:
        kept = requests.get(url + "/healthz", headers={"X-Request-ID": "abc-123"})
        made = requests.get(url + "/healthz", headers={"X-Request-ID": "bad id\t<script>"})
    assert kept.headers["X-Request-ID"] == "abc-123"
    assert len(made.headers["X-Request-ID"]) == 32


def test_an_unexpected_error_is_a_json_500_without_its_traceback(gateway, caplog):
    with gateway(triton=FakeTriton(ZeroDivisionError("secret detail"))) as url:
        response = post(url)
    assert response.status_code == 500 and error_of(response)["code"] == "internal"
    assert "secret" not in response.text and "Traceback" not in response.text
    assert "ZeroDivisionError" in caplog.text


def test_unknown_paths_and_tritons_own_api_are_not_found(gateway):
    with gateway() as url:
        infer = requests.post(url + "/v2/models/plate_recognition/infer", json={"inputs": []}, headers=AUTH)
        get = requests.get(url + PATH, headers=AUTH)
    assert infer.status_code == 404 and error_of(infer)["code"] == "not_found"
    assert get.status_code == 405 and error_of(get)["code"] == "method_not_allowed"


def test_the_api_page_is_served_from_the_package(gateway):
    with gateway() as url:
        page = requests.get(url + "/docs").text
        script = requests.get(url + "/docs/assets/swagger-ui-bundle.js")
        spec = requests.get(url + "/openapi.json").json()
    assert "/docs/assets/swagger-ui-bundle.js" in page and "cdn" not in page
    assert script.status_code == 200 and len(script.content) > 100_000
    assert spec["openapi"] == "3.0.3" and "201" in spec["paths"][PATH]["post"]["responses"]
    assert "anyOf" not in json.dumps(spec["components"]["schemas"]["Reading"])


def test_readyz_is_503_until_a_health_check_has_finished(gateway):
    def failing(url):
        raise RuntimeError("a bug in the check")

    with gateway(health=failing) as url:
        response = requests.get(url + "/readyz")
    assert response.status_code == 503 and "no health check" in response.json()["reason"]
