"""The deep health check against a fake Triton on 127.0.0.1: which answers count as healthy."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

import pytest

from plates.client.health import (
    PROBES,
    RELOADED_GRACE_S,
    HealthReport,
    ModelHealth,
    TrafficAwareCheck,
    deep_check,
    failing_since,
    main,
    reloading,
    request_counts,
    served_since,
    write_verdict,
)


@pytest.fixture(autouse=True)
def verdicts(verdict_dir):
    return verdict_dir


@pytest.fixture
def fake_triton(http_server):
    """A server answering /v2/models/<model>/infer with the status set per model in `statuses` (200 by default), and
    /v2/models/stats with the successes and failures per model in `statuses["counts"]` (none by default). A model in
    `statuses["slow"]` answers its probe after that many seconds, having first set the counts to those in
    `statuses["while_slow"]`, if any: what clients' requests made them while the probe waited."""
    statuses: dict = {"counts": {}, "slow": {}}
    seen: list[tuple[str, dict]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            assert self.path == "/v2/models/stats"
            seen.append(("stats", {}))
            stats = [
                {"name": name, "inference_stats": {"success": {"count": done}, "fail": {"count": failed}}}
                for name, (done, failed) in statuses["counts"].items()
            ]
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps({"model_stats": stats}).encode())

        def do_POST(self):
            model = self.path.split("/")[3]
            seen.append((model, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            if model in statuses["slow"]:
                statuses["counts"] = statuses.get("while_slow", statuses["counts"])
                time.sleep(statuses["slow"][model])
            status = statuses.get(model, 200)
            body = json.dumps({"error": f"Stub process '{model}_0_0' is not healthy."} if status != 200 else {})
            self.send_response(status)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    return http_server(Handler), statuses, seen


def test_every_model_answering_is_healthy(fake_triton):
    url, _, seen = fake_triton
    report = deep_check(url)
    assert report.healthy and report.summary().startswith("healthy: plate_recognition ok")
    # plate_recognition calls yolo itself: a dead yolo fails that request.
    assert [model for model, _ in seen] == ["plate_recognition", "stn", "lprnet", "lprnet_rows"]
    photo = seen[0][1]["inputs"][0]
    assert photo["datatype"] == "UINT8" and len(photo["data"]) == photo["shape"][0] * photo["shape"][1] * 3


def test_a_failing_model_is_unhealthy_and_named_with_its_error(fake_triton, capsys):
    url, statuses, _ = fake_triton
    statuses["stn"] = 500
    report = deep_check(url)
    assert not report.healthy and [m.model for m in report.failed] == ["stn"]
    assert main(["--url", url]) == 1
    assert capsys.readouterr().err.strip() == "unhealthy: stn: HTTP 500: Stub process 'stn_0_0' is not healthy."


def test_a_busy_model_is_healthy(fake_triton):
    url, statuses, _ = fake_triton
    statuses["plate_recognition"] = 503  # refused for overload: it answered
    report = deep_check(url)
    assert report.healthy and report.models[0].detail == "busy"


def test_no_server_is_unhealthy(capsys):
    assert main(["--url", "127.0.0.1:9", "--timeout", "1"]) == 1
    assert "plate_recognition: no answer" in capsys.readouterr().err


def test_probes_are_shaped_as_each_model_takes_them():
    assert PROBES["stn"]["shape"] == PROBES["lprnet"]["shape"] == PROBES["lprnet_rows"]["shape"] == [1, 3, 24, 94]
    assert len(PROBES["stn"]["data"]) == 3 * 24 * 94


def test_a_model_is_served_when_it_answered_requests_since_and_failed_none():
    before = {"plate_recognition": (10, 1), "stn": (4, 0), "lprnet": (4, 0), "yolo": (10, 0)}
    now = {"plate_recognition": (12, 1), "stn": (5, 1), "lprnet": (4, 0), "yolo": (3, 0)}
    # stn failed one since: probed; lprnet was sent nothing; yolo's counts went back (a restarted server).
    assert served_since(before, now) == {"plate_recognition"}
    assert served_since(None, now) == served_since(before, None) == frozenset()


def test_the_supervisors_check_probes_only_the_models_without_traffic_since_its_last_check(fake_triton):
    url, statuses, seen = fake_triton
    check = TrafficAwareCheck(timeout=5)
    statuses["counts"] = {
        "plate_recognition": (1, 0),
        "yolo": (1, 0),
        "stn": (1, 0),
        "lprnet": (1, 0),
        "lprnet_rows": (1, 0),
    }
    assert check(url).healthy
    # Nothing to compare with yet: every probe, then the counts again, which the probes' answers changed.
    assert [model for model, _ in seen] == ["stats", "plate_recognition", "stn", "lprnet", "lprnet_rows", "stats"]
    # Clients' requests since, none of them with a plate for lprnet, nor with a two-line plate.
    statuses["counts"] = {
        "plate_recognition": (9, 0),
        "yolo": (9, 0),
        "stn": (3, 0),
        "lprnet": (1, 0),
        "lprnet_rows": (1, 0),
    }
    seen.clear()
    report = check(url)
    assert [model for model, _ in seen] == ["stats", "lprnet", "lprnet_rows", "stats"]
    assert report.healthy and report.summary().startswith("healthy: plate_recognition served, stn served, lprnet ok")
    # Traffic on every model: no probe, and the one reading stands for the next check.
    statuses["counts"] = {
        "plate_recognition": (10, 0),
        "yolo": (10, 0),
        "stn": (4, 0),
        "lprnet": (2, 0),
        "lprnet_rows": (2, 0),
    }
    seen.clear()
    assert check(url).healthy and [model for model, _ in seen] == ["stats"]
    assert check.counts == statuses["counts"]
    # yolo's stub died: its calls fail, while plate_recognition, which answers its clients that error, succeeds.
    statuses["counts"] = {
        "plate_recognition": (13, 0),
        "yolo": (10, 3),
        "stn": (5, 0),
        "lprnet": (2, 0),
        "lprnet_rows": (2, 0),
    }
    statuses["plate_recognition"] = 500
    seen.clear()
    report = check(url)
    assert [model for model, _ in seen] == ["stats", "plate_recognition", "lprnet", "lprnet_rows", "stats"]
    assert [m.model for m in report.failed] == ["plate_recognition"]


def test_counts_are_none_where_no_server_answers():
    assert request_counts("127.0.0.1:9", timeout=1) is None


def test_a_model_is_failing_when_its_failures_rose_and_its_successes_did_not():
    before = {"plate_recognition": (10, 1), "yolo": (10, 0), "stn": (4, 0), "lprnet": (4, 2)}
    now = {"plate_recognition": (12, 2), "yolo": (10, 5), "stn": (4, 0), "lprnet": (5, 3)}
    # plate_recognition and lprnet failed some but still finished others: busy at worst; stn did nothing.
    assert failing_since(before, now) == {"yolo": "5 requests failed and none succeeded since the last check"}
    assert failing_since(None, now) == failing_since(before, None) == {}


def test_a_refusal_from_a_probe_of_a_failing_model_is_dead_not_busy(fake_triton):
    url, statuses, _ = fake_triton
    check = TrafficAwareCheck(timeout=5)
    statuses["counts"] = {"plate_recognition": (9, 0), "yolo": (9, 0), "stn": (3, 0), "lprnet": (3, 0)}
    assert check(url).healthy
    # Under load yolo's stub died: its requests fail after a wait, so plate_recognition's queue is full.
    statuses["counts"] = {"plate_recognition": (12, 0), "yolo": (9, 4), "stn": (3, 0), "lprnet": (3, 0)}
    statuses["plate_recognition"] = 503
    report = check(url)
    assert [m.model for m in report.failed] == ["plate_recognition"]
    assert report.failed[0].detail == ("refused, and yolo 4 requests failed and none succeeded since the last check")
    # A refusal while every model it exercises still finishes requests is busy, as before.
    statuses["counts"] = {"plate_recognition": (15, 0), "yolo": (12, 4), "stn": (3, 0), "lprnet": (3, 0)}
    assert check(url).healthy


COUNTS = {"plate_recognition": (9, 0), "yolo": (9, 0), "stn": (3, 0), "lprnet": (3, 0), "lprnet_rows": (3, 0)}


def test_a_probe_that_times_out_while_its_models_serve_others_is_busy(fake_triton):
    """As at the gateway under schemathesis: no photo reached plate_recognition between two checks, then its probe
    waited behind the photos that came while it was sent, past its timeout."""
    url, statuses, _ = fake_triton
    check = TrafficAwareCheck(timeout=0.3)
    statuses["counts"] = COUNTS
    assert check(url).healthy
    statuses["slow"] = {"plate_recognition": 1.0}
    statuses["while_slow"] = {**COUNTS, "plate_recognition": (11, 0), "yolo": (11, 0)}
    report = check(url)
    assert report.healthy, report.summary()
    assert report.models[0].detail == "busy (no answer in 0.3 s while serving others)"


def test_a_probe_that_times_out_at_a_model_that_serves_nothing_is_unhealthy(fake_triton):
    url, statuses, _ = fake_triton
    check = TrafficAwareCheck(timeout=0.3)
    statuses["counts"] = COUNTS
    assert check(url).healthy
    # Hung: nothing finishes. plate_recognition alone finishing something is not enough where yolo did not.
    statuses["slow"] = {"plate_recognition": 1.0}
    statuses["while_slow"] = {**COUNTS, "plate_recognition": (10, 0)}
    report = check(url)
    assert [(m.model, m.detail) for m in report.failed] == [("plate_recognition", "no answer in 0.3 s")]
    # And one whose requests fail meanwhile is not serving either.
    statuses["while_slow"] = {**COUNTS, "plate_recognition": (12, 0), "yolo": (11, 2)}
    assert not check(url).healthy


def test_a_supervisors_verdict_is_every_callers_answer_without_a_probe(fake_triton, capsys):
    url, statuses, seen = fake_triton
    dead = HealthReport((ModelHealth("tritonserver", False, "restarting: the stub of yolo (pid 7) exited", 0.0),))
    write_verdict(url, dead)  # by this process, which runs: as the supervisor would
    assert deep_check(url) == dead
    assert TrafficAwareCheck(timeout=5)(url) == dead
    assert main(["--url", url]) == 1
    assert capsys.readouterr().err.strip() == "unhealthy: tritonserver: restarting: the stub of yolo (pid 7) exited"
    assert seen == []
    # The supervisor's own check probes and never reads its own verdict.
    assert TrafficAwareCheck(timeout=5, reads_verdict=False)(url).healthy and seen


def test_a_model_counts_as_reloading_while_it_reloads_and_for_a_grace_after(monkeypatch):
    # What the gateway asks when plate_recognition does not serve: requests queued on its old version wait out the
    # reload and are answered after the supervisor has called it healthy again.
    url = "localhost:8000"
    healthy = HealthReport((ModelHealth("plate_recognition", True, "ok", 0.01),))
    write_verdict(url, HealthReport((ModelHealth("yolo", False, "reloading: its stub exited", 0.0),)))
    assert reloading(url) == ["yolo"]
    now = time.time()
    write_verdict(url, healthy, {"plate_recognition": now - 5, "stn": now - RELOADED_GRACE_S - 1})
    assert reloading(url) == ["plate_recognition"]
    monkeypatch.setattr(time, "time", lambda: now + 6)  # the reload 11 s ago, the verdict still fresh
    assert reloading(url) == []
