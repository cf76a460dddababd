import threading
import time

import pytest

from plates.cli.main import main
from plates.evaluation.timing import (
    Latency,
    ModelTime,
    Outcomes,
    format_first,
    format_gateway,
    format_outcomes,
    format_run,
    format_sweep,
    format_wire,
    merge,
    model_time,
    run_requests,
    summarize,
)
from plates.exceptions import InvalidInputError, OverloadedError, PlatesError, ServerUnavailableError


def stats(requests, items, executions, queue_ns, infer_ns):
    """Triton's /v2/models/<m>/stats answer, cut to what the benchmark reads."""
    stage = lambda ns: {"count": requests, "ns": ns}  # noqa: E731
    return {
        "model_stats": [
            {
                "inference_count": items,
                "execution_count": executions,
                "inference_stats": {
                    "success": stage(0),
                    "queue": stage(queue_ns),
                    "compute_input": stage(1_000_000),
                    "compute_infer": stage(infer_ns),
                    "compute_output": stage(1_000_000),
                },
            }
        ]
    }


def test_summarize_gives_percentiles_in_milliseconds_and_throughput():
    latency = summarize([i / 1000 for i in range(1, 101)], seconds=2.0)
    assert latency.requests == 100 and latency.throughput == 50.0
    assert latency.p50_ms == pytest.approx(50.5) and latency.p99_ms == pytest.approx(99.01)
    assert latency.mean_ms == pytest.approx(50.5)


def test_summarize_of_nothing_is_an_error():
    with pytest.raises(InvalidInputError, match="no requests"):
        summarize([], seconds=1.0)


def test_model_time_is_the_difference_per_request():
    before = stats(requests=10, items=150, executions=10, queue_ns=5_000_000, infer_ns=100_000_000)
    after = stats(requests=30, items=450, executions=25, queue_ns=25_000_000, infer_ns=500_000_000)
    m = model_time("stn", before, after)
    assert (m.requests, m.items, m.executions) == (20, 300, 15)
    assert m.queue_ms == pytest.approx(1.0)
    assert m.compute_ms == pytest.approx(20.0)  # 400 ms of inference over 20 requests; input/output did not grow


def test_model_time_of_an_unused_model_is_zero():
    idle = stats(requests=3, items=3, executions=3, queue_ns=1, infer_ns=1)
    assert model_time("lprnet", idle, idle) == ModelTime("lprnet", 0, 0, 0, 0.0, 0.0)


def test_run_requests_sends_each_request_once_across_threads():
    calls, lock = [], threading.Lock()

    def send():
        with lock:
            calls.append(threading.get_ident())

    outcomes = run_requests(send, requests=25, concurrency=4)
    assert len(calls) == len(outcomes.accepted) == 25 and outcomes.seconds > 0
    assert len(set(calls)) <= 4 and outcomes.refused == outcomes.failed == []


def answers(*errors):
    """A send() that raises the given errors in turn (None: accepted), then accepts every request."""
    queue, lock = list(errors), threading.Lock()

    def send():
        with lock:
            error = queue.pop(0) if queue else None
        if error is not None:
            raise error

    return send


def test_run_requests_counts_refusals_and_failures_without_retrying_them():
    send = answers(OverloadedError("busy"), None, PlatesError("bad answer"), OverloadedError("busy"))
    outcomes = run_requests(send, requests=10, concurrency=1)
    assert (len(outcomes.accepted), len(outcomes.refused), len(outcomes.failed)) == (7, 2, 1)
    assert str(outcomes.failed[0]) == "bad answer"
    assert outcomes.slowest_s == max(outcomes.accepted + outcomes.refused)


def test_run_requests_pauses_a_refused_thread_more_after_each_refusal_in_a_row():
    pauses = []

    def pause(retry):
        pauses.append(retry)
        return 0.0

    send = answers(OverloadedError("busy"), OverloadedError("busy"), None, OverloadedError("busy"))
    run_requests(send, requests=6, concurrency=1, pause=pause)
    assert pauses == [0, 1, 0]


def test_run_requests_for_a_duration_stops_when_it_is_up():
    outcomes = run_requests(lambda: time.sleep(0.01), requests=None, concurrency=2, duration_s=0.2)
    assert 4 <= len(outcomes.accepted) <= 60 and outcomes.seconds < 1.0


def test_run_requests_stops_and_raises_when_no_server_answers():
    sent = []

    def send():
        sent.append(1)
        if len(sent) == 3:
            raise ServerUnavailableError("gone")

    with pytest.raises(ServerUnavailableError, match="gone"):
        run_requests(send, requests=100, concurrency=1)
    assert len(sent) == 3


def test_outcomes_line_counts_each_kind_the_stalled_and_the_slowest_against_the_timeout():
    outcomes = Outcomes(accepted=[0.2, 0.4], refused=[0.02, 0.02], failed=[PlatesError("x")], seconds=1.0)
    assert format_outcomes(outcomes, timeout_s=60) == (
        "  accepted 2 (1 over 0.3 s), refused 2 (p99 20.0 ms), failed 1; slowest 400 ms of the client's 60 s timeout"
    )
    assert "refused 0 (none)" in format_outcomes(Outcomes(accepted=[0.1]), timeout_s=5)


def test_sweep_names_the_highest_level_without_refusals_and_compares_higher_ones_to_it():
    levels = {
        1: Outcomes(accepted=[0.2] * 10),
        2: Outcomes(accepted=[0.4] * 10),
        4: Outcomes(accepted=[0.6] * 5, refused=[0.01] * 5),
        8: Outcomes(accepted=[0.8] * 2, refused=[0.01] * 8),
    }
    lines = format_sweep(levels).splitlines()
    assert lines[0] == "sustainable concurrency (the highest with nothing refused): 2, accepted p99 400 ms"
    assert lines[1] == "  concurrency 4 (2x): accepted p99 1.50x of that, 5 of 10 refused"
    assert lines[2] == "  concurrency 8 (4x): accepted p99 2.00x of that, 8 of 10 refused"
    assert "none measured" in format_sweep({1: Outcomes(accepted=[0.1], refused=[0.01])})


def test_format_run_names_every_model():
    text = format_run("car.jpg", Latency(4, 2.0, 10, 20, 30, 15), [ModelTime("stn", 4, 60, 4, 0.5, 9.0)], concurrency=2)
    assert text.splitlines()[0].startswith("car.jpg: 4 requests, concurrency 2: 2.00 req/s, latency p50 10.0 ms")
    assert "stn" in text.splitlines()[1] and "60 items" in text and "compute 9.0 ms per request" in text


def test_bench_rejects_a_request_count_below_one_before_connecting(samples, capsys):
    assert main(["bench", str(samples / "car.jpg"), "--requests", "0", "--url", "localhost:9"]) == 65
    assert "--requests (0)" in capsys.readouterr().err


def test_bench_names_an_unreadable_photo(tmp_path, capsys):
    bad = tmp_path / "notes.jpg"
    bad.write_text("not a photo")
    assert main(["bench", str(bad), "--url", "localhost:9"]) == 65
    assert f"photo {bad}" in capsys.readouterr().err


def test_bench_exits_naming_the_url_when_no_server_answers(samples, capsys):
    assert main(["bench", str(samples / "car.jpg"), "--url", "localhost:9"]) == ServerUnavailableError.exit_code
    assert "no ready Triton server at http://localhost:9" in capsys.readouterr().err


def test_format_first_puts_the_first_request_beside_the_steady_p50():
    assert format_first("car.jpg as file", 90.0, 60.0) == (
        "car.jpg as file: first request 90.0 ms, steady p50 60.0 ms (1.50 times)"
    )


def test_format_wire_puts_both_ways_side_by_side():
    line = format_wire("car.jpg", 103_000, 1_030_000, 150.0, 180.0)
    assert line == (
        "car.jpg: on the wire 103,000 B as file, 1,030,000 B as pixels (10.0 times more); "
        "p50 latency 150.0 ms as file, 180.0 ms as pixels"
    )


def test_bench_frame_is_a_jpeg_of_the_photo_at_that_size(samples):
    from plates.cli.bench import as_frame, frame_size
    from plates.photos.decoding import decode_pixels
    from plates.photos.files import read_image

    frame = decode_pixels(as_frame(read_image(samples / "car.jpg"), frame_size("1920x1080")), "frame")
    assert frame.shape == (1080, 1920, 3)


@pytest.mark.parametrize("text", ["1920", "ax1080", "0x10"])
def test_bench_refuses_a_frame_that_is_not_a_size(text, capsys):
    with pytest.raises(SystemExit):
        main(["bench", "a.jpg", "--frame", text])
    assert "--frame" in capsys.readouterr().err


def test_side_by_side_alternates_the_two_and_keeps_each_runs_stages():
    from plates.evaluation.timing import format_side_by_side, side_by_side

    calls = []
    result = side_by_side(
        lambda: calls.append("served"), lambda: calls.append("local") or {"detector": 0.02, "lprnet": 0.01}, 3
    )
    assert calls == ["served", "local"] * 3
    assert len(result.served) == len(result.in_process) == len(result.stages) == 3
    result.served, result.in_process = [0.105, 0.110, 0.2], [0.1, 0.1, 0.1]
    text = format_side_by_side("car.jpg", result)
    assert "p50 110.0 ms served, 100.0 ms in one process; serving adds +10.0 %; served takes 5.50 times the " in text
    assert text.endswith("in one process, p50 per stage in ms: detector 20.0, lprnet 10.0"), text


def test_side_by_side_with_the_detector_alone_times_the_pixels_both_ways_in_the_same_turns():
    from plates.evaluation.timing import format_side_by_side, side_by_side

    calls = []
    result = side_by_side(
        lambda: calls.append("served"),
        lambda: calls.append("local") or {"detector": 0.02},
        2,
        detector=(lambda: calls.append("pixels"), lambda: calls.append("yolo")),
    )
    assert calls == ["served", "local", "pixels", "yolo"] * 2
    assert result.stages == [{"detector": 0.02}] * 2
    result.served_pixels, result.detector_served = [0.036, 0.036], [0.030, 0.030]
    text = format_side_by_side("cat.jpeg", result)
    assert text.splitlines()[-1] == (
        "  its pixels, served: p50 36.0 ms through the pipeline, 30.0 ms through the detector alone (yolo called "
        "directly): the pipeline takes 1.20 times the detector alone"
    )


def test_merge_adds_up_the_runs_taken_in_turns():
    merged = merge([Outcomes([0.1], [0.2], [], 1.0), Outcomes([0.3, 0.4], [], [PlatesError("x")], 2.0)])
    assert merged.accepted == [0.1, 0.3, 0.4] and merged.refused == [0.2] and len(merged.failed) == 1
    assert merged.seconds == 3.0


def test_format_gateway_gives_what_the_gateway_adds_to_the_p50_and_costs_in_throughput():
    direct, gateway = Outcomes([0.030] * 10, [], [], 1.0), Outcomes([0.032] * 9, [0.001], [], 1.0)
    line = format_gateway("car.jpg", 4, direct, gateway)
    assert "p50 30.0 / 32.0 ms (gateway adds +2.0 ms)" in line
    assert "10.00 / 9.00 req/s (gateway -10.0 %)" in line and "refused 0 / 1" in line
    assert "no accepted request" in format_gateway("car.jpg", 4, direct, Outcomes())
