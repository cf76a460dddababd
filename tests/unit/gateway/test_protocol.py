"""Plates as Plate Recognizer's results: their fields, types and case, ours beside."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from plates.client.service import Plate
from plates.exceptions import InvalidInputError
from plates.gateway.snapshot.protocol import result_of, timestamp_of, unread_of

READ = Plate("B840CK197", [94.6, 330.4, 132.5, 343.3], 0.6296, 0.7076, [("B840CK197", 0.7076), ("B840OK197", 0.2236)])


def test_result_of_a_read_plate_keeps_their_types_and_case():
    result = result_of(READ).model_dump()
    assert result["plate"] == "b840ck197" and result["text"] == "B840CK197"
    assert result["box"] == {"xmin": 95, "ymin": 330, "xmax": 132, "ymax": 343}
    assert all(isinstance(v, int) for v in result["box"].values())
    assert (result["score"], result["dscore"], result["text_score"]) == (0.7076, 0.6296, 0.7076)
    assert result["candidates"] == [{"plate": "b840ck197", "score": 0.7076}, {"plate": "b840ok197", "score": 0.2236}]
    assert result["region"] == {"code": "ru", "score": 0.7076}
    assert result["subject"] == {"code": "197", "name": "Moscow"}
    assert result["vehicle"]["type"] == "Unknown" and result["vehicle"]["score"] == 0


def test_result_of_a_plate_without_candidates_lists_its_text_first():
    plate = Plate("A001AA88", [0, 0, 10, 5], 0.9, 0.5)
    result = result_of(plate)
    assert [c.plate for c in result.candidates] == ["a001aa88"]
    assert result.subject is None  # 88 was withdrawn: valid in form, in no region's list


def test_unread_of_keeps_box_dscore_and_candidates():
    unread = unread_of(Plate(None, [-1.2, 3.5, 40.4, 20.6], 0.41, 0.0, [("MAF1A77", 0.008)])).model_dump()
    assert unread == {
        "box": {"xmin": 0, "ymin": 4, "xmax": 40, "ymax": 21},
        "dscore": 0.41,
        "candidates": [{"plate": "maf1a77", "score": 0.008}],
    }


@pytest.mark.parametrize(
    "given, written",
    [
        ("2019-08-19T13:11:25", "2019-08-19T13:11:25.000000Z"),
        ("2024-10-17T23:04:50.098Z", "2024-10-17T23:04:50.098000Z"),
        ("2019-08-19T16:11:25+03:00", "2019-08-19T13:11:25.000000Z"),
        # RFC 3339 forms Python 3.10 does not read as they are: a lower-case t and z, nanoseconds.
        ("2000-01-01t00:00:00.123456789z", "2000-01-01T00:00:00.123456Z"),
        ("2026-11-24T10:15:00+00:00", "2026-11-24T10:15:00.000000Z"),  # Genetec's connector: isoformat()
        ("0001-01-01T01:00:00+01:00", "0001-01-01T00:00:00.000000Z"),  # four digits of year, as RFC 3339 has them
    ],
)
def test_timestamp_is_written_in_utc_as_they_write_it(given, written):
    assert timestamp_of(given) == written


def test_timestamp_defaults_to_now():
    now = datetime(2020, 10, 12, 16, 17, 27, 574008, tzinfo=timezone.utc)
    assert timestamp_of(None, now) == "2020-10-12T16:17:27.574008Z"


def test_timestamp_that_is_not_iso_8601_is_refused():
    with pytest.raises(InvalidInputError, match="timestamp 'yesterday' is not ISO 8601"):
        timestamp_of("yesterday")


@pytest.mark.parametrize(
    "given, written",
    [
        ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00.000000+01:00"),
        ("9999-12-31T23:59:59.5-01:00", "9999-12-31T23:59:59.500000-01:00"),
    ],
)
def test_a_valid_timestamp_outside_the_years_of_utc_keeps_its_offset(given, written):
    # Found by schemathesis: valid RFC 3339 times that were a 500 (OverflowError) before.
    assert timestamp_of(given) == written
