"""Loading one model of a running Triton again, through its model-repository API: what the supervisor does when a
model's process died or the model fails its checks (plates.server.supervisor).

Standard library only, like the health check. The API is closed to everybody without the admin header
(plates.server.options); the supervisor that started the server holds its value.

Tried on Triton 2.51 with this repository (docs/health.md, Healing): a `load` of a model whose stub died is a no-op
(its files are unchanged), so a reload is an `unload`, then a `load`. The unload only begins the model's unloading,
which may never end (a dead stub's version, see plates.server.child_process); the load does not wait for it, and answers
once the new version is loaded and warmed by its config's model_warmup, before Triton sends it any request.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from plates.client.health import error_text
from plates.client.readiness import normalize_url
from plates.exceptions import ModelLoadError
from plates.server.options import ADMIN_HEADER

# A stub's start imports PyTorch: 2 to 10 s on the 2-core machine under load. This only bounds a load that hangs.
LOAD_TIMEOUT_S = 120.0
# plate_recognition's config holds no model_warmup: its warm-up calls the other models, which Triton refuses until
# every model has loaded, so the load at start would fail. A reload happens on a ready server, so it adds one: the
# photo yolo's config warms with (warmup/photo beside each), sent through every model as a client's file is.
RELOAD_WARMUP = {
    "plate_recognition": [
        {
            "name": "photo",
            "batch_size": 1,
            "count": 3,
            "inputs": {"image_bytes": {"data_type": "TYPE_STRING", "dims": [1], "input_data_file": "photo"}},
        },
    ],
}


def reload_model(url: str, key: str, model: str, timeout: float = LOAD_TIMEOUT_S) -> None:
    """Unload `model` and load it again, warm, on the server at `url` whose admin APIs open with `key`."""
    config = None
    if model in RELOAD_WARMUP:
        config = {**_call(url, f"/v2/models/{model}/config", None, None, timeout), "model_warmup": RELOAD_WARMUP[model]}
    _call(url, f"/v2/repository/models/{model}/unload", key, {}, timeout)
    body = {} if config is None else {"parameters": {"config": json.dumps(config)}}
    _call(url, f"/v2/repository/models/{model}/load", key, body, timeout)


def _call(url: str, path: str, key: str | None, body: dict | None, timeout: float) -> dict:
    """GET `path` (`body` None) or POST `body` as JSON, with the admin header where `key` is given; its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{normalize_url(url)}{path}", data=data)
    if key is not None:
        request.add_header(ADMIN_HEADER, key)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = response.read()
    except urllib.error.HTTPError as error:
        raise ModelLoadError(f"{path}: HTTP {error.code}: {error_text(error)}") from error
    except (urllib.error.URLError, OSError) as error:
        raise ModelLoadError(f"{path}: no answer: {getattr(error, 'reason', error)}") from error
    try:
        return json.loads(answer) if answer else {}
    except ValueError as error:
        raise ModelLoadError(f"{path}: answered what is not JSON: {answer[:100]!r}") from error
