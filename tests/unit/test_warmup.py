"""The warm-up of a fresh server: the drawn photo it sends, and how it sends it, to a fake Triton on 127.0.0.1."""

from __future__ import annotations

import json
import re
import struct
from http.server import BaseHTTPRequestHandler

import cv2
import numpy as np
import pytest

from plates.build.warmup import PHOTO
from plates.client.health import PROBES
from plates.server.warmup import send_photo, warm_up


@pytest.fixture
def fake_triton(http_server):
    """A server answering plate_recognition's infer with the statuses in `status` in turn (the last one from then
    on), keeping each request's path and body."""
    status, seen = [200], []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append((self.path, self.headers, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(status.pop(0) if len(status) > 1 else status[0])
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    return http_server(Handler), status, seen


def test_warm_up_sends_the_photo_as_a_file_through_the_orchestrator_three_times_then_the_probes(fake_triton):
    url, _, seen = fake_triton
    said, report = warm_up(url)
    assert re.fullmatch(
        r"warm-up in [\d.]+ s: 3 photos through plate_recognition \(0 refused, sent again\); "
        r"then healthy: plate_recognition ok .*",
        said,
    )
    assert report.healthy and [m.model for m in report.models] == list(PROBES)
    assert [path.split("/")[3] for path, _, _ in seen] == ["plate_recognition"] * 4 + ["stn", "lprnet", "lprnet_rows"]
    path, headers, body = seen[0]
    assert path == "/v2/models/plate_recognition/infer"
    # Triton's binary tensor extension: the JSON header, then the BYTES tensor (its element's length, then it).
    header_size = int(headers["Inference-Header-Content-Length"])
    header = json.loads(body[:header_size])
    [tensor] = header["inputs"]
    assert header["parameters"] == {"binary_data_output": True}
    assert (tensor["name"], tensor["datatype"], tensor["shape"]) == ("image_bytes", "BYTES", [1])
    photo = PHOTO.read_bytes()
    assert body[header_size:] == struct.pack("<I", len(photo)) + photo
    assert tensor["parameters"]["binary_data_size"] == len(photo) + 4


def test_a_refused_photo_is_sent_again_and_a_failed_one_is_said_not_raised(fake_triton):
    url, status, seen = fake_triton
    status[:] = [503, 503, 200]  # clients reached the restarted server first: its queue is full for a moment
    assert send_photo(url, 1, timeout=30) == "1 photos through plate_recognition (2 refused, sent again)"
    assert len(seen) == 3
    status[:] = [500]
    assert send_photo(url, 3, timeout=30) == "photo 1 of 3 failed: HTTP 500 Internal Server Error"
    status[:] = [503]
    assert send_photo(url, 3, timeout=0.3) == "photo 1 of 3 failed: HTTP 503 Service Unavailable"
    said, report = warm_up("127.0.0.1:9", timeout=1)
    assert said.startswith("warm-up in ") and ": photo 1 of 3 failed: " in said and not report.healthy


def test_the_warm_up_photo_holds_one_plate_for_the_detector():
    from plates.build.weights import find_weights
    from plates.detection.detector import PlateDetector

    photo = cv2.imdecode(np.frombuffer(PHOTO.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert len(PlateDetector(find_weights("plate_detector.pt")).detect(photo)) == 1
