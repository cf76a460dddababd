"""The deep health check: a small real request to every model, over HTTP, as a client would send it; and the verdict
of the supervisor, which also watches the models' processes, for the callers that cannot.

Triton 2.51 keeps answering ready on /v2/health/ready after a Python model's stub process died (its stub restart is
gone, and model readiness does not follow stub health in this release), while every request to that model fails.
So the one health check of the service, used by the image's HEALTHCHECK, the gateway's /readyz (the Kubernetes
probes) and the `plates serve` supervisor, asks each model for an answer instead:

    python3 -m plates.client.health [--url localhost:8000] [--timeout 5]   # exit 0 healthy, 1 not; one line

It imports only the standard library, so that a probe every 10 s costs a process start, not a PyTorch import.

A refusal (HTTP 503) alone cannot say whether a model is busy or dead: a dead stub's requests wait about a second in
Triton before they fail, so under load its queue is full and refuses like a busy one. Two signals tell them apart
whatever the load:
- The supervisor started Triton, so it sees the stubs, Triton's children: one that has exited is a dead model, seen
  within half a second (plates.server.supervisor). No other caller can see them: the gateway runs in a process of its
  own, the HEALTHCHECK and the probes in a new process each time, maybe in another container.
- Triton's statistics, read at each check: a model whose failures rose since the previous check while its successes
  did not is dead, not busy (a busy model still finishes requests; Triton 2.51 does not count queue refusals as
  failures). Only a caller that checks again and again has a previous reading (TrafficAwareCheck). So too a probe
  that timed out: where the models it asked finished clients' requests while it waited, it waited its turn.

So the supervisor writes its verdict to a small file, one per server port (verdict_path), at every half-second tick;
deep_check and TrafficAwareCheck take that verdict, where its writer still runs, instead of probing: every caller
gets the evidence of the one process that can see it, and the server gets one prober under load instead of three.
A healthy verdict older than VERDICT_FRESH_S means the supervisor stopped watching: unhealthy, so that liveness
restarts what hangs. Without a supervisor (a tritonserver started by hand) the callers probe, as before: a refusal
then counts as busy, since restarting a busy server would make the overload worse.

The supervisor, which checks every 5 s and remembers, probes only the models that have not proven themselves since
its last check (TrafficAwareCheck): a model that answered client requests in between, and failed none, is alive.
A probe that meets a client's request at a model can cost that request Triton 2.51's half-second batcher stall
(docs/performance.md), so under traffic the supervisor leaves the models to their clients.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from plates.client.readiness import normalize_url

# The orchestrator is asked with a blank photo, which makes it call yolo (a dead yolo stub fails that request, named
# in its error); the detector finds no plate there, so stn, lprnet and lprnet_rows are asked directly, with one blank
# crop each.
PHOTO_SIDE = 32
CROP_SHAPE = [1, 3, 24, 94]
BUSY = 503
SERVED = "served"
# How long a live model may keep a probe waiting behind clients' photos.
PROBE_TIMEOUT_S = 5.0
NO_ANSWER_IN = "no answer in"  # the detail of a probe that timed out: "no answer in 5 s"
RELOADING = "reloading"  # the detail of a model the supervisor is loading again: "reloading: why"
# The folder of the supervisor's verdicts; else $XDG_RUNTIME_DIR (the user's own), else the temporary folder.
VERDICT_DIR_VARIABLE = "PLATES_HEALTH_DIR"
# The supervisor writes twice a second; a healthy verdict this old is from a supervisor that stopped watching.
VERDICT_FRESH_S = 10.0
# How long after a model's reload an answer that it does not serve is still the reload's (reloading()).
RELOADED_GRACE_S = 10.0


def _tensor(name: str, datatype: str, shape: list[int], value: int | float) -> dict:
    return {"name": name, "datatype": datatype, "shape": shape, "data": [value] * math.prod(shape)}


PROBES = {
    "plate_recognition": _tensor("input__0", "UINT8", [PHOTO_SIDE, PHOTO_SIDE, 3], 0),
    "stn": _tensor("input__0", "FP32", CROP_SHAPE, 0.0),
    "lprnet": _tensor("input__0", "FP32", CROP_SHAPE, 0.0),
    "lprnet_rows": _tensor("input__0", "FP32", CROP_SHAPE, 0.0),
}
# The models each probe exercises. A Python model whose execute answers an error (plate_recognition, when yolo's
# stub is dead) counts that as a success in Triton's statistics; only the model whose stub is dead counts failures.
EXERCISED = {
    "plate_recognition": ("plate_recognition", "yolo"),
    "stn": ("stn",),
    "lprnet": ("lprnet",),
    "lprnet_rows": ("lprnet_rows",),
}


# Each model's successful and failed requests since the server started, from Triton's statistics API.
Counts = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class ModelHealth:
    model: str
    healthy: bool
    detail: str  # "ok", "busy", "served" (requests since the last check, not probed), or what went wrong
    seconds: float


@dataclass(frozen=True)
class HealthReport:
    models: tuple[ModelHealth, ...]

    @property
    def healthy(self) -> bool:
        return all(m.healthy for m in self.models)

    @property
    def reloading(self) -> list[str]:
        """The models the supervisor is loading again (their detail begins with RELOADING)."""
        return [m.model for m in self.models if m.detail.startswith(RELOADING)]

    @property
    def failed(self) -> list[ModelHealth]:
        return [m for m in self.models if not m.healthy]

    def summary(self) -> str:
        if self.healthy:
            return "healthy: " + ", ".join(
                m.model + (f" {m.detail}" if m.detail == SERVED else f" {m.detail} {m.seconds * 1000:.0f} ms")
                for m in self.models
            )
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
        return ModelHealth(model, False, f"HTTP {error.code}: {error_text(error)}", seconds)
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        seconds = time.monotonic() - started
        if isinstance(reason, TimeoutError):
            return ModelHealth(model, False, f"{NO_ANSWER_IN} {timeout:g} s", seconds)
        return ModelHealth(model, False, f"no answer: {reason}", seconds)


def error_text(error: urllib.error.HTTPError) -> str:
    try:
        return json.loads(error.read()).get("error", "")[:300]
    except (ValueError, OSError, AttributeError):
        return error.reason


def probe_models(url: str, timeout: float = PROBE_TIMEOUT_S, served: frozenset[str] = frozenset()) -> HealthReport:
    """Every model, one small request each, except where every model the request would exercise is in `served`
    (alive by its traffic: served_since); the orchestrator first, since it is what clients call."""
    return HealthReport(
        tuple(
            ModelHealth(model, True, SERVED, 0.0)
            if served.issuperset(EXERCISED[model])
            else probe_model(url, model, timeout)
            for model in PROBES
        )
    )


def deep_check(url: str, timeout: float = PROBE_TIMEOUT_S) -> HealthReport:
    """The verdict of the supervisor watching the server at `url`, where one runs; else every model probed."""
    verdict = read_verdict(url)
    return verdict if verdict is not None else probe_models(url, timeout)


def request_counts(url: str, timeout: float) -> Counts | None:
    """Each model's successful and failed requests so far; None where Triton's statistics cannot be read."""
    try:
        with urllib.request.urlopen(f"{normalize_url(url)}/v2/models/stats", timeout=timeout) as response:
            stats = json.loads(response.read())["model_stats"]
    except (urllib.error.URLError, OSError, ValueError, KeyError):
        return None
    counts: Counts = {}
    for model in stats:
        requests = model.get("inference_stats", {})
        done, failed = counts.get(model["name"], (0, 0))
        counts[model["name"]] = (
            done + int(requests.get("success", {}).get("count", 0)),
            failed + int(requests.get("fail", {}).get("count", 0)),
        )
    return counts


def failing_since(before: Counts | None, now: Counts | None) -> dict[str, str]:
    """The models whose failures rose between the two readings while their successes did not, each with what it
    did: a dead stub fails every request that reaches it, while a busy model still finishes some."""
    if before is None or now is None:
        return {}
    return {
        model: f"{failed - before[model][1]} requests failed and none succeeded since the last check"
        for model, (done, failed) in now.items()
        if model in before and done == before[model][0] and failed > before[model][1]
    }


def served_since(before: Counts | None, now: Counts | None) -> frozenset[str]:
    """The models that answered requests between the two readings and failed none. A model whose stub died fails
    every request sent to it, so one that failed any, or was sent none, is not among them; nor is any model after a
    restart, whose counts start again from 0."""
    if before is None or now is None:
        return frozenset()
    return frozenset(
        model
        for model, (done, failed) in now.items()
        if model in before and done > before[model][0] and failed == before[model][1]
    )


@dataclass
class TrafficAwareCheck:
    """deep_check for a caller that checks again and again (the supervisor, the gateway): each check sends only the
    probes whose models have not all served requests, without a failure, since the previous one; a refusal counts
    as busy only where no model the probe exercised has been failing without success since then."""

    timeout: float
    counts: Counts | None = None  # as read after the previous check's probes
    reads_verdict: bool = True  # take the supervisor's verdict where one runs; False in the supervisor, its writer

    def __call__(self, url: str) -> HealthReport:
        verdict = read_verdict(url) if self.reads_verdict else None
        if verdict is not None:
            return verdict
        now = request_counts(url, self.timeout)
        report = dead_not_busy(
            probe_models(url, self.timeout, served_since(self.counts, now)), failing_since(self.counts, now)
        )
        # Probes count as requests too: read again after any, so that their answers do not pass for traffic at the
        # next check. Where every model served, nothing was sent and this reading stands.
        probed = any(m.detail != SERVED for m in report.models)
        self.counts = request_counts(url, self.timeout) if probed else now
        return late_not_dead(report, served_since(now, self.counts)) if probed else report


def late_not_dead(report: HealthReport, served_meanwhile: frozenset[str]) -> HealthReport:
    """`report` with each probe that timed out made busy where every model it exercised finished requests, and failed
    none, while the probes ran (`served_meanwhile`): the probe waited its turn behind clients' photos at a live
    model. A hung model finishes nothing, and stays unhealthy."""
    models = []
    for health in report.models:
        if health.detail.startswith(NO_ANSWER_IN) and served_meanwhile.issuperset(EXERCISED[health.model]):
            health = ModelHealth(health.model, True, f"busy ({health.detail} while serving others)", health.seconds)
        models.append(health)
    return HealthReport(tuple(models))


def dead_not_busy(report: HealthReport, failing: Mapping[str, str]) -> HealthReport:
    """`report` with each refusal ("busy") from a probe that exercised a failing model (failing_since) made a
    failure: that model is dead, and its queue refuses because requests wait on it before they fail."""
    models = []
    for health in report.models:
        dead = [f"{model} {failing[model]}" for model in EXERCISED[health.model] if model in failing]
        if health.detail == "busy" and dead:
            health = ModelHealth(health.model, False, "refused, and " + "; ".join(dead), health.seconds)
        models.append(health)
    return HealthReport(tuple(models))


def reloading(url: str) -> list[str]:
    """The models the supervisor watching the server at `url` says it is loading again, or loaded again less than
    RELOADED_GRACE_S ago; none without one. Requests queued on a model's old version wait out its reload and are
    then answered that it does not serve, after the supervisor has called it healthy: they too were lost to it."""
    read = _read_record(url)
    if read is None:
        return []
    record, verdict = read
    try:
        reloaded = record.get("reloaded", {}).items()
        recent = [model for model, at in reloaded if time.time() - float(at) < RELOADED_GRACE_S]
    except (ValueError, AttributeError, TypeError):
        recent = []
    return list(dict.fromkeys([*verdict.reloading, *recent]))


def verdict_path(url: str) -> Path:
    """The file of the supervisor's verdict on the server at `url`: one per port, as servers beside each other
    have (the tests', and other users')."""
    folder = os.environ.get(VERDICT_DIR_VARIABLE) or os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(folder) / f"plates-health-{urlsplit(normalize_url(url)).port or 80}.json"


def write_verdict(url: str, report: HealthReport, reloaded: dict[str, float] | None = None) -> None:
    """The supervisor's verdict, and when it last loaded each model again (`reloaded`, time.time()), replacing the
    last at once: a reader never sees half a file."""
    path = verdict_path(url)
    record = {
        "pid": os.getpid(),
        "written": time.time(),
        "models": [asdict(m) for m in report.models],
        "reloaded": dict(reloaded or {}),
    }
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(record))
    os.replace(partial, path)


def remove_verdict(url: str) -> None:
    verdict_path(url).unlink(missing_ok=True)


def read_verdict(url: str) -> HealthReport | None:
    """The verdict of the supervisor watching the server at `url`; None where there is none, or its writer has
    exited (it was about a server that is gone with it)."""
    read = _read_record(url)
    return None if read is None else read[1]


def _read_record(url: str) -> tuple[dict, HealthReport] | None:
    """The verdict file's record and its report (read_verdict's), or None."""
    try:
        record = json.loads(verdict_path(url).read_text())
        pid, written = int(record["pid"]), float(record["written"])
        report = HealthReport(tuple(ModelHealth(**m) for m in record["models"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _running(pid):
        return None
    age = time.time() - written
    if report.healthy and age > VERDICT_FRESH_S:
        report = HealthReport((ModelHealth("supervisor", False, f"its last verdict is {age:.0f} s old", 0.0),))
    return record, report


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m plates.client.health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="localhost:8000", help="Triton HTTP endpoint (default localhost:8000)")
    parser.add_argument(
        "--timeout", type=float, default=PROBE_TIMEOUT_S, help=f"seconds a model may take (default {PROBE_TIMEOUT_S:g})"
    )
    args = parser.parse_args(argv)
    report = deep_check(args.url, args.timeout)
    print(report.summary(), file=sys.stdout if report.healthy else sys.stderr)
    return 0 if report.healthy else 1


if __name__ == "__main__":
    sys.exit(main())
