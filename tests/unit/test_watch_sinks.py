import csv
import dataclasses
import io
import json
import logging

import numpy as np
import pytest

from plates.exceptions import InvalidInputError
from plates.recognition.regions import Region
from plates.watch.events import Event
from plates.watch.sinks import CropSink, CsvSink, JsonLinesSink, WebhookSink
from plates.watch.watchlist import Match

EVENT = Event(
    "rtsp://cam/stream",
    "gate",
    3,
    "B840CK197",
    0.4,
    Region("197", "Moscow"),
    1.0,
    3.5,
    "2025-01-01T00:00:01.000Z",
    "2025-01-01T00:00:03.500Z",
    12,
    [96.2, 331.8, 131.4, 344.0],
    6,
)


def test_json_lines_sink_writes_one_line_per_event():
    stream = io.StringIO()
    JsonLinesSink(stream).emit(EVENT, None)
    assert json.loads(stream.getvalue()) == EVENT.to_dict()


def test_csv_sink_writes_a_header_and_a_flat_row(tmp_path):
    sink = CsvSink(tmp_path / "events.csv")
    sink.emit(EVENT, None)
    sink.close()
    rows = list(csv.DictReader(open(tmp_path / "events.csv")))
    assert [(r["text"], r["region_name"], r["box"], r["best_frame"]) for r in rows] == [
        ("B840CK197", "Moscow", "96.2 331.8 131.4 344", "12")
    ]


def test_csv_sink_writes_the_camera_and_the_watched_plate(tmp_path):
    sink = CsvSink(tmp_path / "events.csv")
    sink.emit(dataclasses.replace(EVENT, watched=Match("B84OCK197", "boss", 0.5, "B840CK197")), None)
    sink.emit(EVENT, None)
    sink.close()
    rows = list(csv.DictReader(open(tmp_path / "events.csv")))
    assert [(r["camera_id"], r["watched_plate"], r["watched_label"], r["watched_distance"]) for r in rows] == [
        ("gate", "B84OCK197", "boss", "0.5"),
        ("gate", "", "", ""),
    ]


def test_csv_sink_names_a_file_it_cannot_write(tmp_path):
    with pytest.raises(InvalidInputError, match="--csv .*missing"):
        CsvSink(tmp_path / "missing" / "events.csv")


def test_crop_sink_writes_the_crop_named_by_track_and_text(tmp_path):
    CropSink(tmp_path).emit(EVENT, np.zeros((12, 38, 3), np.uint8))
    assert [p.name for p in tmp_path.iterdir()] == ["3_B840CK197.jpg"]


def test_webhook_retries_a_failed_post_and_delivers_the_event(webhook_receiver):
    receiver = webhook_receiver(failures=2)
    sink = WebhookSink(receiver.url, retries=3, backoff=0.01)
    sink.emit(EVENT, None)
    sink.close()
    assert receiver.bodies == [EVENT.to_dict()]


def test_webhook_logs_an_event_it_cannot_deliver_and_does_not_hold_up_emit(webhook_receiver, caplog):
    receiver = webhook_receiver(failures=100)
    sink = WebhookSink(receiver.url, retries=1, backoff=0.01)
    with caplog.at_level(logging.WARNING):
        sink.emit(EVENT, None)  # returns at once: the POST happens on the sink's thread
        sink.close()
    assert "event of track 3 not delivered after 2 tries" in caplog.text


def test_webhook_rejects_a_url_that_is_not_http():
    with pytest.raises(InvalidInputError, match="--webhook ftp://x"):
        WebhookSink("ftp://x")
