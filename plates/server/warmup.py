"""Warm a server that has just said ready, before the supervisor calls it ready: a few photos through
plate_recognition, as a client sends them, and the health check's probes.

A fresh server answered its first car.jpg in 175 to 270 ms against a steady p50 of 32 to 46 ms: first calls set
things up (TorchScript profiles its first runs of a shape, ONNX Runtime and the Python backend allocate, the
orchestrator's code and its calls between the stubs run once). After three requests of a drawn plate photo
(convert/warmup_photo.py), 0.5 to 0.9 s, Triton's statistics show the first car.jpg taking its steady time, model by
model (docs/health.md, Warm before ready). Triton's own model_warmup, tried first, warms each model alone at load:
it cannot send a photo through plate_recognition, whose calls to the other models fail while they still load, and
left the first car.jpg at 1.6 to 2 times the p50.

Standard library only, like the health check, so that the supervisor stays a small process: the photo goes as
Triton's binary tensor extension over HTTP.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from plates.build.warmup import PHOTO, bytes_element
from plates.client.health import HealthReport, probe_models
from plates.client.readiness import normalize_url

REQUESTS = 3  # TorchScript reaches its steady time on the third run of a shape
REFUSED = 503
REFUSED_PAUSE_S = 0.1


def warm_up(url: str, requests: int = REQUESTS, timeout: float = 30.0) -> tuple[str, HealthReport]:
    """Send the drawn photo `requests` times, one after another, then the health check's probes; what happened, in
    one line, and the probes' report, which is the server's first check. Probes have shapes of their own (a 32x32
    photo's pixels, one crop): warmed here, their first runs do not meet the first clients at a check after ready."""
    started = time.monotonic()
    photos = send_photo(url, requests, timeout)
    report = probe_models(url, timeout)
    return f"warm-up in {time.monotonic() - started:.2f} s: {photos}; then {report.summary()}", report


def send_photo(url: str, requests: int, timeout: float) -> str:
    """What sending the photo `requests` times came to. A refusal (503: clients reached a restarted server first
    and fill its queue) is sent again after a pause, within `timeout` s in all. A failure is said, not raised: the
    probes that follow name the model."""
    started = time.monotonic()
    tensor = bytes_element(PHOTO.read_bytes())
    # Every output, binary, as PlatesClient asks for them: the answer warmed is the one clients get.
    header = json.dumps(
        {
            "inputs": [
                {
                    "name": "image_bytes",
                    "datatype": "BYTES",
                    "shape": [1],
                    "parameters": {"binary_data_size": len(tensor)},
                }
            ],
            "parameters": {"binary_data_output": True},
        }
    ).encode()
    request = urllib.request.Request(
        f"{normalize_url(url)}/v2/models/plate_recognition/infer",
        data=header + tensor,
        headers={"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))},
    )
    answered = refused = 0
    while answered < requests:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                response.read()
            answered += 1
        except urllib.error.HTTPError as error:
            if error.code != REFUSED or time.monotonic() - started > timeout:
                return f"photo {answered + 1} of {requests} failed: HTTP {error.code} {error.reason}"
            refused += 1
            time.sleep(REFUSED_PAUSE_S)
        except (urllib.error.URLError, OSError) as error:
            return f"photo {answered + 1} of {requests} failed: {getattr(error, 'reason', error)}"
    return f"{requests} photos through plate_recognition ({refused} refused, sent again)"
