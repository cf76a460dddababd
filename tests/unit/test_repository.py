"""Loading a model again through Triton's model-repository API, against a fake Triton on 127.0.0.1."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest

from plates.exceptions import ModelLoadError
from plates.server.options import ADMIN_HEADER
from plates.server.repository import reload_model

CONFIG = {"name": "plate_recognition", "backend": "python", "max_batch_size": 0, "model_warmup": []}


@pytest.fixture
def fake_triton(http_server):
    """A server that answers each request as `answers` says by path (200 and {} otherwise), keeping what it got."""
    answers, seen = {}, []

    class Handler(BaseHTTPRequestHandler):
        def answer(self, body: bytes | None):
            seen.append((self.command, self.path, self.headers.get(ADMIN_HEADER), body and json.loads(body)))
            status, answer = answers.get(self.path, (200, {}))
            self.send_response(status)
            self.end_headers()
            self.wfile.write(json.dumps(answer).encode())

        def do_GET(self):
            self.answer(None)

        def do_POST(self):
            self.answer(self.rfile.read(int(self.headers["Content-Length"])))

        def log_message(self, *args):
            pass

    return http_server(Handler), answers, seen


def test_a_model_is_unloaded_then_loaded_with_the_admin_key(fake_triton):
    url, _, seen = fake_triton
    reload_model(url, "the-key", "yolo")
    assert seen == [
        ("POST", "/v2/repository/models/yolo/unload", "the-key", {}),
        ("POST", "/v2/repository/models/yolo/load", "the-key", {}),
    ]


def test_plate_recognition_is_loaded_again_with_the_photo_warm_up_its_config_cannot_hold(fake_triton):
    url, answers, seen = fake_triton
    answers["/v2/models/plate_recognition/config"] = (200, CONFIG)
    reload_model(url, "the-key", "plate_recognition")
    assert [(method, path, key) for method, path, key, _ in seen] == [
        ("GET", "/v2/models/plate_recognition/config", None),  # not a closed API: no key sent
        ("POST", "/v2/repository/models/plate_recognition/unload", "the-key"),
        ("POST", "/v2/repository/models/plate_recognition/load", "the-key"),
    ]
    config = json.loads(seen[-1][3]["parameters"]["config"])
    assert {**config, "model_warmup": []} == CONFIG
    [warmup] = config["model_warmup"]
    assert warmup["batch_size"] == 1 and warmup["count"] == 3
    assert warmup["inputs"] == {"image_bytes": {"data_type": "TYPE_STRING", "dims": [1], "input_data_file": "photo"}}


def test_a_load_triton_refuses_or_no_server_is_a_model_load_error_naming_it(fake_triton):
    url, answers, _ = fake_triton
    refused = {"error": "failed to load 'stn', failed to poll from model repository"}
    answers["/v2/repository/models/stn/load"] = (400, refused)
    with pytest.raises(ModelLoadError, match=r"^/v2/repository/models/stn/load: HTTP 400: failed to load 'stn', fail"):
        reload_model(url, "the-key", "stn")
    with pytest.raises(ModelLoadError, match=r"^/v2/repository/models/stn/unload: no answer: "):
        reload_model("127.0.0.1:9", "the-key", "stn", timeout=2)
