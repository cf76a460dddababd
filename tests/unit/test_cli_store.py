"""plates store on a SQLite file: what a person types, and what a hostile argument gets."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta, timezone

import pytest

from plates.cli.main import main
from plates.store.database import Store
from plates.store.records import VisitRules, record
from plates.store.sightings import Sighting

T0 = datetime(2026, 11, 28, 1, 0, tzinfo=timezone.utc)


@pytest.fixture
def site_db(tmp_path) -> str:
    path = str(tmp_path / "site.db")
    store = Store(path)
    with store.session() as session:
        for minutes, (camera, text, direction) in enumerate(
            [("in", "A123BC77", "in"), ("in", "B840CK197", "in"), ("out", "A123BC7", "out")]
        ):
            at = T0 + timedelta(minutes=30 * minutes)
            record(
                session,
                Sighting(camera, at, at, text, 0.9, [(text, 0.9)], [0, 0, 1, 1], direction=direction),
                VisitRules(),
            )
    store.close()
    return path


def test_search_a_plate_typed_in_cyrillic_finds_its_misread_exit(site_db, capsys):
    assert main(["store", "search", "а123вс77", "--store", site_db, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(r["camera_id"], r["read_text"], r["plate"]) for r in found["reads"]] == [
        ("out", "A123BC7", "A123BC77"),
        ("in", "A123BC77", "A123BC77"),
    ]


def test_inside_and_visits_as_a_table_and_csv(site_db, capsys, tmp_path):
    assert main(["store", "inside", "--store", site_db]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:4] == ["id", "plate", "label", "state"] and "B840CK197" in table[1]
    assert main(["store", "visits", "--store", site_db, "--csv", str(tmp_path / "v.csv")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "v.csv")))
    assert [(r["plate"], r["state"], r["dwell_minutes"]) for r in rows] == [
        ("B840CK197", "inside", rows[0]["dwell_minutes"]),
        ("A123BC77", "left", "60.0"),
    ]


def test_a_correction_and_a_span_search(site_db, capsys):
    assert main(["store", "correct", "3", "A123BC77", "--store", site_db]) == 0
    assert capsys.readouterr().out.strip() == "read 3: A123BC7 -> A123BC77"
    argv = [
        "store",
        "search",
        "--store",
        site_db,
        "--since",
        "2026-11-28T01:15Z",
        "--until",
        "2026-11-28T01:45Z",
        "--json",
    ]
    assert main(argv) == 0
    assert [r["text"] for r in json.loads(capsys.readouterr().out)["reads"]] == ["B840CK197"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["search", "x" * 10_000], "not a plate"),
        (["search", "'; DROP TABLE reads; --"], "not a plate"),
        (["plate", "Z999ZZ99"], "no plate 'Z999ZZ99' in the store"),
        (["correct", "99", "A123BC77"], "no read 99"),
    ],
)
def test_bad_arguments_are_one_clear_line(site_db, capsys, argv, message):
    assert main(["store", *argv, "--store", site_db]) == 65
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1
    assert main(["store", "search", "--store", site_db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["reads"]) == 3


def test_a_time_that_is_no_time_is_refused_by_the_parser(site_db, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["store", "search", "--store", site_db, "--since", "last night"])
    assert exit_.value.code == 2 and "no ISO 8601 time" in capsys.readouterr().err


def test_a_store_url_of_another_database_is_refused(capsys):
    assert main(["store", "search", "--store", "mysql://u@h/db"]) == 78
    assert "'mysql' databases are not supported" in capsys.readouterr().err
