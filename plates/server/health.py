"""The deep health check: a small real request to every model, over HTTP, as a client would send it.

Triton 2.51 keeps answering ready on /v2/health/ready after a Python model's stub process died (its stub restart is
gone, and model readiness does not follow stub health in this release), while every request to that model fails.
So the one health check of the service, used by the image's HEALTHCHECK, the Kubernetes probes and the
`plates serve` supervisor, asks each model for an answer instead:

    python3 -m plates.server.health [--url localhost:8000] [--timeout 5]   # exit 0 healthy, 1 not; one line

It imports only the standard library, so that a probe every 10 s costs a process start, not a PyTorch import.
A refusal for overload (HTTP 503) counts as healthy: the model answered, it is only busy, and restarting a busy
server would make the overload worse.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from plates.readiness import normalize_url

# The orchestrator is asked with a blank photo, which makes it call yolo (a dead yolo stub fails that request, named
# in its error); the detector finds no plate there, so stn and lprnet are asked directly, with one blank crop each.
PHOTO_SIDE = 32
CROP_SHAPE = [1, 3, 24, 94]
BUSY = 503


def _tensor(name: str, datatype: str, shape: list[int], value: int | float) -> dict:
    return {"name": name, "datatype": datatype, "shape": shape, "data": [value] * math.prod(shape)}


PROBES = {
    "plate_recognition": _tensor("input__0", "UINT8", [PHOTO_SIDE, PHOTO_SIDE, 3], 0),
    "stn": _tensor("input__0", "FP32", CROP_SHAPE, 0.0),
    "lprnet": _tensor("input__0", "FP32", CROP_SHAPE, 0.0),
}


@dataclass(frozen=True)
class ModelHealth:
    model: str
    healthy: bool
    detail: str  # "ok", "busy", or what went wrong
    seconds: float


@dataclass(frozen=True)
class HealthReport:
    models: tuple[ModelHealth, ...]

    @property
    def healthy(self) -> bool:
        return all(m.healthy for m in self.models)

    @property
    def failed(self) -> list[ModelHealth]:
        return [m for m in self.models if not m.healthy]

    def summary(self) -> str:
        if self.healthy:
            return "healthy: " + ", ".join(f"{m.model} {m.detail} {m.seconds * 1000:.0f} ms" for m in self.models)
        return "unhealthy: " + "; ".join(f"{m.model}: {m.detail}" for m in self.failed)


def probe_model(url: str, model: str, timeout: float) -> ModelHealth:
    body = json.dumps({"inputs": [PROBES[model]]}).encode()
    request = urllib.request.Request(
        f"{normalize_url(url)}/v2/models/{model}/infer", data=body, headers={"Content-Type": "application/json"}
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
        return ModelHealth(model, True, "ok", time.monotonic() - started)
    except urllib.error.HTTPError as error:
        seconds = time.monotonic() - started
        if error.code == BUSY:
            return ModelHealth(model, True, "busy", seconds)
        return ModelHealth(model, False, f"HTTP {error.code}: {_error_text(error)}", seconds)
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return ModelHealth(model, False, f"no answer: {reason}", time.monotonic() - started)


def _error_text(error: urllib.error.HTTPError) -> str:
    try:
        return json.loads(error.read()).get("error", "")[:300]
    except (ValueError, OSError, AttributeError):
        return error.reason


def deep_check(url: str, timeout: float = 5.0) -> HealthReport:
    """Every model, one small request each; the orchestrator first, since it is what clients call."""
    return HealthReport(tuple(probe_model(url, model, timeout) for model in PROBES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m plates.server.health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="localhost:8000", help="Triton HTTP endpoint (default localhost:8000)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds each model may take (default 5)")
    args = parser.parse_args(argv)
    report = deep_check(args.url, args.timeout)
    print(report.summary(), file=sys.stdout if report.healthy else sys.stderr)
    return 0 if report.healthy else 1


if __name__ == "__main__":
    sys.exit(main())
