"""The store on both databases it runs on: a SQLite file, and a real PostgreSQL server started for these tests.
Visits, fuzzy search, corrections, the purge, migrations, and the writer across a database that goes away."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest
from alembic import command
from sqlalchemy import event, func, select
from sqlalchemy import text as sql

from plates.exceptions import SettingsError
from plates.store import corrections, search
from plates.store.database import Store, _alembic_config
from plates.store.records import Retention, VisitRules, close_absent, due_overstays, purge, record, record_many
from plates.store.schema import PlateRow, ReadRow
from plates.store.sightings import Sighting
from plates.store.writer import StoreWriter

T0 = datetime(2026, 11, 28, 8, 0, tzinfo=timezone.utc)
HEAD = "0002"
RULES = VisitRules(visit_distance=1.0, absent_after=timedelta(hours=24), overstay_after=timedelta(hours=2))


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


def seen(camera: str, minutes: float, text: str | None, direction: str | None, candidates=None) -> Sighting:
    at = T0 + timedelta(minutes=minutes)
    return Sighting(
        camera_id=camera,
        seen_at=at,
        last_seen_at=at + timedelta(seconds=2),
        text=text,
        text_score=0.9,
        candidates=candidates or ([(text, 0.9)] if text else []),
        box=[10.0, 20.0, 110.0, 45.0],
        direction=direction,
    )


def test_a_visit_opens_at_the_entrance_and_closes_at_the_exit_with_its_dwell(store):
    with store.session() as session:
        record(session, seen("gate-in", 0, "A123BC77", "in"), RULES)
        record(session, seen("gate-in", 5, "B840CK197", "in"), RULES)
        record(session, seen("gate-out", 95, "A123BC77", "out"), RULES)
    with store.session() as session:
        visits = {v["plate"]: v for v in search.visits(session, T0 + timedelta(hours=3))}
        inside = search.inside_now(session, T0 + timedelta(hours=3))
    assert visits["A123BC77"]["state"] == "left" and visits["A123BC77"]["dwell_minutes"] == 95.0
    assert [v["plate"] for v in inside] == ["B840CK197"] and inside[0]["dwell_minutes"] == 175.0


@pytest.mark.parametrize(
    "exit_text",
    ["A123BC7", "A12ЗBC77".replace("З", "3"), "A1Z3BC77".replace("Z", "2"), "A123BO77", "4123BC77", "A123BC777"],
    ids=["region digit dropped", "same", "same again", "C read O", "A read 4", "a digit too many"],
)
def test_an_exit_read_a_character_off_closes_its_own_visit(store, exit_text):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES)
        record(session, seen("in", 1, "K555MM99", "in"), RULES)
        read = record(session, seen("out", 30, exit_text, "out"), RULES)
        read_id = read.id
    with store.session() as session:
        visits = {v["plate"]: v for v in search.visits(session, T0 + timedelta(hours=1))}
        history = search.search_reads(session, search.ReadQuery(plate=exit_text))
    assert visits["A123BC77"]["state"] == "left" and visits["A123BC77"]["exit_read_id"] == read_id
    assert visits["K555MM99"]["state"] == "inside"
    assert read_id in [r["id"] for r in history["reads"]] and history["reads"][0]["plate"] == "A123BC77"


def test_an_exit_read_closes_the_visit_its_second_candidate_names(store):
    with store.session() as session:
        record(session, seen("in", 0, "E515TY123", "in"), RULES)
        record(session, seen("out", 10, "E515TT12", "out", [("E515TT12", 0.5), ("E515TY123", 0.3)]), RULES)
        visits = search.visits(session, T0 + timedelta(hours=1))
    assert [(v["plate"], v["state"]) for v in visits] == [("E515TY123", "left")]


def test_a_plate_two_edits_away_closes_no_visit(store):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES)
        record(session, seen("out", 10, "A128BK77", "out"), RULES)
        visits = search.visits(session, T0 + timedelta(hours=1))
        reads = search.search_reads(session, search.ReadQuery(plate="A128BK77", max_distance=0))
    assert [(v["plate"], v["state"]) for v in visits] == [("A123BC77", "inside")]
    assert reads["reads"][0]["plate"] == "A128BK77"


def test_a_car_read_again_at_the_entrance_keeps_one_visit(store):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES)
        record(session, seen("in", 0.5, "A123BO77", "in"), RULES)  # a look-alike: the same car at the barrier
        record(session, seen("in", 1, "A123BC78", "in"), RULES)  # a different car, one character off
        visits = search.visits(session, T0 + timedelta(hours=1))
    assert sorted(v["plate"] for v in visits) == ["A123BC77", "A123BC78"]


def test_a_batch_opens_and_closes_the_visits_that_its_reads_one_by_one_would(store, request, tmp_path):
    """The writer stores what queued in one batch: the visits must be those of the same reads recorded in turn,
    with the batch's own entrances closed by its own exits and a look-alike at the barrier kept to one visit."""
    earlier = seen("in", -30, "E515TY123", "in")
    sightings = [
        seen("in", 0, "A123BC77", "in"),
        seen("in", 0.5, "A123BO77", "in"),  # the same car at the barrier
        seen("in", 1, "A123BC78", "in"),  # another car, one character off
        seen("yard", 2, "K555MM99", None),
        seen("in", 3, "X999XX99", "in"),
        seen("out", 4, None, "out"),  # nothing read
        seen("out", 5, "A123BC7", "out"),  # closes A123BC77's visit, made in this batch
        seen("out", 6, "E515TT12", "out", [("E515TT12", 0.5), ("E515TY123", 0.3)]),  # the one before the batch
        seen("out", 7, "M001MM01", "out"),  # never came in
        seen("in", 8, "X999XX99", "in"),  # still inside: no second visit
    ]
    other = request.getfixturevalue("postgres").new_database() if store.backend != "sqlite" else tmp_path / "b.db"
    one_by_one, batched = store, Store(str(other))
    try:
        for target in (one_by_one, batched):
            with target.session() as session:
                record(session, earlier, RULES)
        with one_by_one.session() as session:
            for sighting in sightings:
                record(session, sighting, RULES)
        with batched.session() as session:
            ids = record_many(session, sightings, RULES, [None] * len(sightings), ids=True)
        assert len(ids) == len(sightings) == len(set(ids))
        answers = []
        for target in (one_by_one, batched):
            with target.session() as session:
                visits = search.visits(session, T0 + timedelta(hours=1))
                plates = session.execute(
                    select(PlateRow.text, PlateRow.first_seen_at, PlateRow.last_seen_at, func.count(ReadRow.id))
                    .outerjoin(ReadRow, ReadRow.plate_id == PlateRow.id)
                    .group_by(PlateRow.id)
                    .order_by(PlateRow.text)
                ).all()
            answers.append(
                (
                    sorted((v["plate"], v["state"], v["entered_at"], v["exited_at"]) for v in visits),
                    list(map(tuple, plates)),
                )
            )
    finally:
        batched.close()
    assert answers[0] == answers[1]
    assert sorted((plate, state) for plate, state, _, _ in answers[1][0]) == [
        ("A123BC77", "left"),
        ("A123BC78", "inside"),
        ("E515TY123", "left"),
        ("X999XX99", "inside"),
    ]


def test_overstays_are_due_once_and_old_visits_close_as_absent(store):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES)
        record(session, seen("in", 100, "B840CK197", "in"), RULES)
    with store.session() as session:
        due = due_overstays(session, T0 + timedelta(minutes=130), RULES)
        assert [(o.plate, o.camera_id) for o in due] == [("A123BC77", "in")]
        assert due_overstays(session, T0 + timedelta(minutes=131), RULES) == []
        assert close_absent(session, T0 + timedelta(hours=24, minutes=1), RULES) == 1
        states = {v["plate"]: v["state"] for v in search.visits(session, T0 + timedelta(hours=25))}
    assert states == {"A123BC77": "absent", "B840CK197": "inside"}


def test_search_by_camera_time_span_and_counts_by_hour(store):
    with store.session() as session:
        for minutes, camera in ((0, "a"), (30, "b"), (70, "a"), (130, "a")):
            record(session, seen(camera, minutes, f"A{100 + minutes:03d}BC77", None), RULES)
        found = search.search_reads(
            session,
            search.ReadQuery(camera_id="a", since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=200)),
        )
        hours = search.counts(session, "hour")
        days = search.counts(session, "day", camera_id="b")
    assert [r["text"] for r in found["reads"]] == ["A230BC77", "A170BC77"]
    assert hours == [
        {"hour": "2026-11-28T08:00:00Z", "reads": 2},
        {"hour": "2026-11-28T09:00:00Z", "reads": 1},
        {"hour": "2026-11-28T10:00:00Z", "reads": 1},
    ]
    assert days == [{"day": "2026-11-28", "reads": 1}]


def test_fuzzy_search_finds_look_alikes_and_a_missed_character_and_ranks_them(store):
    with store.session() as session:
        for minutes, text in enumerate(["B840CK197", "B840CK19", "8840OK197", "B841CK197", "M555EE55"]):
            record(session, seen("a", minutes, text, None), RULES)
        found = search.search_reads(session, search.ReadQuery(plate="в840ск197"))
    assert [(p["text"], p["distance"]) for p in found["plates"]] == [
        ("B840CK197", 0.0),
        ("8840OK197", 1.0),
        ("B840CK19", 1.0),
        ("B841CK197", 1.0),
    ]


@pytest.mark.parametrize(
    "hostile", ["x" * 10_000, "' OR 1=1 --", '"; DROP TABLE reads; --', "A1%", "\x00A123", "А123ВС77\u202e"]
)
def test_a_hostile_search_is_a_clear_error_and_the_store_is_untouched(store, hostile):
    with store.session() as session:
        record(session, seen("a", 0, "A123BC77", None), RULES)
    with store.session() as session, pytest.raises(ValueError, match="not a plate"):
        search.search_reads(session, search.ReadQuery(plate=hostile))
    with store.session() as session:
        assert len(search.search_reads(session, search.ReadQuery())["reads"]) == 1


def test_a_correction_moves_the_read_and_its_visit_to_the_right_plate(store):
    with store.session() as session:
        entry = record(session, seen("in", 0, "A123BC77", "in"), RULES).id
    with store.session() as session:
        read = corrections.correct_read(session, entry, "а 128 вс 77")
        assert (read.text, read.read_text) == ("A128BC77", "A123BC77")
    with store.session() as session:
        visits = search.visits(session, T0 + timedelta(hours=1))
        assert [v["plate"] for v in visits] == ["A128BC77"]
        # The corrected plate's exit closes the visit now.
        record(session, seen("out", 20, "A128BC77", "out"), RULES)
        assert search.visits(session, T0 + timedelta(hours=1))[0]["state"] == "left"


def test_merging_two_plates_moves_reads_and_visits_and_keeps_one_open_visit(store):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES)
        record(session, seen("in", 5, "X999XX99", "in"), RULES)
        record(session, seen("a", 6, "X999XX99", None), RULES)
    with store.session() as session:
        plates = {p.text: p.id for p in session.scalars(sql_select_plates())}
        corrections.describe_plate(session, plates["X999XX99"], "visitor", ["guest"])
        corrections.merge_plates(session, plates["X999XX99"], plates["A123BC77"])
    with store.session() as session:
        history = search.plate_history(session, plates["A123BC77"], T0 + timedelta(hours=1))
    assert len(history["reads"]) == 3 and history["label"] == "visitor" and history["tags"] == ["guest"]
    assert sorted(v["state"] for v in history["visits"]) == ["absent", "inside"]


def sql_select_plates():
    from sqlalchemy import select

    from plates.store.schema import PlateRow

    return select(PlateRow)


def test_purge_forgets_old_reads_and_visits_but_not_labelled_plates(store):
    with store.session() as session:
        record(session, seen("in", 0, "A123BC77", "in"), RULES, crop="2026-11-28/a.jpg")
        record(session, seen("out", 10, "A123BC77", "out"), RULES)
        record(session, seen("a", 0, "K555MM99", None), RULES)
        record(session, seen("a", 60 * 24 * 40, "B840CK197", None), RULES)
    with store.session() as session:
        plates = {p.text: p.id for p in session.scalars(sql_select_plates())}
        corrections.describe_plate(session, plates["K555MM99"], "staff", None)
        crops, reads, visits = purge(
            session, T0 + timedelta(days=45), Retention(timedelta(days=30), timedelta(days=30))
        )
    assert (crops, reads, visits) == (["2026-11-28/a.jpg"], 3, 1)
    with store.session() as session:
        assert sorted(p.text for p in session.scalars(sql_select_plates())) == ["B840CK197", "K555MM99"]


def test_a_store_of_the_first_schema_is_migrated_with_its_reads(store_url):
    first = Store(store_url, migrate=False)
    command.upgrade(_alembic_config(first.engine), "0001")
    with first.engine.begin() as connection:
        connection.execute(
            sql(
                "INSERT INTO reads (camera_id, source, seen_at, last_seen_at, text, read_text, text_score, "
                "candidates, box, readings) VALUES ('gate', '', :at, :at, 'A123BC77', 'A123BC77', 0.9, '[]', '[]', 3)"
            ),
            {"at": T0.replace(tzinfo=None) if first.backend == "sqlite" else T0},
        )
    first.close()
    store = Store(store_url)
    assert store.revision() == HEAD
    with store.session() as session:
        reads = search.search_reads(session, search.ReadQuery())["reads"]
    store.close()
    assert [(r["camera_id"], r["text"], r["seen_at"]) for r in reads] == [
        ("gate", "A123BC77", "2026-11-28T08:00:00.000Z")
    ]


def test_reopening_migrates_nothing_and_a_newer_schema_is_refused(store_url):
    Store(store_url).close()
    store = Store(store_url)
    assert store.revision() == HEAD
    with store.engine.begin() as connection:
        connection.execute(sql("UPDATE alembic_version SET version_num = '9999'"))
    store.close()
    with pytest.raises(SettingsError, match="newer plates"):
        Store(store_url)


def test_times_come_back_in_utc_whatever_zone_they_were_given_in(store):
    moscow = timezone(timedelta(hours=3))
    sighting = seen("a", 0, "A123BC77", None)
    sighting = Sighting(**{**sighting.__dict__, "seen_at": T0.astimezone(moscow)})
    with store.session() as session:
        record(session, sighting, RULES)
    with store.session() as session:
        assert search.search_reads(session, search.ReadQuery())["reads"][0]["seen_at"] == "2026-11-28T08:00:00.000Z"


def test_the_writer_keeps_every_read_while_postgresql_is_stopped(postgres, caplog):
    url = postgres.new_database()
    writer = StoreWriter(Store(url), RULES, live=False, max_backoff=0.5)
    try:
        writer.write(seen("in", 0, "A123BC77", "in"))
        _wait(lambda: writer.written == 1)
        postgres.stop()
        with caplog.at_level(logging.WARNING, logger="plates.store.writer"):
            for minute in range(1, 21):
                writer.write(seen("a", minute, f"K{minute:03d}MM99", None))
            _wait(lambda: writer.failing_since is not None)
            time.sleep(30)  # the outage: reads keep coming, none is lost
            postgres.start()
            _wait(
                lambda: writer.written == 21 and writer.waiting() == 0,
                within=60,
                what=lambda: (writer.written, writer.waiting(), writer.failing_since),
            )
    finally:
        writer.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "cannot write, holding reads" in errors[0]
    store = Store(url)
    with store.session() as session:
        assert len(search.search_reads(session, search.ReadQuery(limit=100))["reads"]) == 21
    store.close()


def _wait(condition, within: float = 20.0, what=lambda: "") -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within the time: {what()}")
        time.sleep(0.05)


def test_the_writer_purges_old_reads_and_their_crops_by_itself(store_url, tmp_path):
    crops = tmp_path / "crops"
    retention = Retention(keep_reads=timedelta(days=1), keep_visits=timedelta(days=1))
    writer = StoreWriter(Store(store_url), RULES, crops, retention, live=False)
    try:
        writer.write(Sighting(**{**seen("a", 0, "A123BC77", None).__dict__, "crop_jpeg": b"\xff\xd8old"}))
        writer.write(Sighting(**{**seen("a", 60 * 48, "B840CK197", None).__dict__, "crop_jpeg": b"\xff\xd8new"}))
        _wait(lambda: writer.written == 2)
    finally:
        writer.close()
    store = Store(store_url)
    with store.session() as session:
        reads = search.search_reads(session, search.ReadQuery())["reads"]
    store.close()
    assert [r["text"] for r in reads] == ["B840CK197"]
    assert [p.read_bytes() for p in crops.rglob("*.jpg")] == [b"\xff\xd8new"]


KILLED_WRITER = """
import sys, time
from datetime import datetime, timedelta, timezone
from plates.store.database import Store
from plates.store.sightings import Sighting
from plates.store.writer import StoreWriter
writer = StoreWriter(Store(sys.argv[1]), live=False)
at = datetime(2026, 11, 28, tzinfo=timezone.utc)
for index in range(10**6):
    moment = at + timedelta(seconds=index)
    text = f"A{index % 1000:03d}BC77"
    writer.write(Sighting("gate", moment, moment, text, 0.9, [(text, 0.9)], [0, 0, 1, 1],
                          direction=("in", "out", None)[index % 3]))
    if index % 200 == 0:
        print(writer.written, flush=True)
        time.sleep(0.01)
"""


def test_a_writer_killed_mid_write_leaves_a_whole_database(store_url, tmp_path):
    process = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, store_url], stdout=subprocess.PIPE, text=True)
    try:
        while int(process.stdout.readline() or 0) < 1000:  # a thousand committed, more in flight
            assert process.poll() is None
    finally:
        process.kill()
        process.wait()
    store = Store(store_url)
    with store.engine.connect() as connection:
        if store.backend == "sqlite":
            assert connection.execute(sql("PRAGMA integrity_check")).scalar() == "ok"
        reads = connection.execute(sql("SELECT count(*) FROM reads")).scalar()
        orphans = connection.execute(
            sql("SELECT count(*) FROM reads WHERE text IS NOT NULL AND plate_id IS NULL")
        ).scalar()
    store.close()
    assert reads >= 1000 and orphans == 0


def test_a_full_disk_is_one_error_line_and_writing_never_blocks_the_caller(tmp_path, caplog):
    store = Store(str(tmp_path / "site.db"))
    with store.session() as session:
        record(session, seen("a", 0, "A123BC77", None), RULES)
    # SQLite's own limit on the file's pages stands for a full disk: every write then fails with SQLITE_FULL.
    event.listen(store.engine, "connect", lambda connection, _: connection.execute("PRAGMA max_page_count = 1"))
    store.engine.dispose()
    writer = StoreWriter(store, RULES, live=False, max_backoff=0.2, drain_timeout=2)
    with caplog.at_level(logging.WARNING, logger="plates.store.writer"):
        started = time.monotonic()
        for minute in range(1, 201):
            writer.write(seen("a", minute, f"K{minute:03d}MM99", None))
        assert time.monotonic() - started < 0.5  # queued, never waited on
        _wait(lambda: writer.failing_since is not None)
        time.sleep(1)
        writer.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 2, errors  # the failure, once; and at exit, what could not be written
    assert "database or disk is full" in errors[0] and "reads not written before exit" in errors[1]
