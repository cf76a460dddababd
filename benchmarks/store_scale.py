"""The store at a site's scale: with N reads stored (1,000,000 by default; synthetic, realistic texts and times), fuzzy
plate search p50 and p90, "inside now", writes a second through the writer (of cameras with no role, and of entrances
and exits, which open and close visits read by read), and the database's size per million reads, on SQLite and on
PostgreSQL (a server of its own, as the tests start one: Debian's package, through runuser as nobody where this runs as
root).

    poetry run python benchmarks/store_scale.py                       # both databases, 1,000,000 reads
    poetry run python benchmarks/store_scale.py --reads 100000 --databases sqlite

The site: 20 cameras over 60 days; 30,000 regular vehicles make 70 % of the reads, a stream of passers-by the rest;
every 4th read is an entrance or exit, so visits open and close. The bulk of the reads is written with SQLAlchemy
Core in batches (how a migration from another system would load them); the write rate is then measured through the
writer (plates.store.writer: every read with its plate, keys and visit, as plates watch writes it). Searches are texts
of stored plates with one character changed (a look-alike, a wrong one or a dropped one), as a person or a camera gets
them wrong.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import func, insert, select, text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from postgres import Postgres  # noqa: E402

from plates.store import search  # noqa: E402
from plates.store.database import Store  # noqa: E402
from plates.store.fuzzy import keys  # noqa: E402
from plates.store.records import Retention, VisitRules  # noqa: E402
from plates.store.schema import PlateKey, PlateRow, ReadRow, VisitRow  # noqa: E402
from plates.store.sightings import Sighting  # noqa: E402
from plates.store.writer import StoreWriter  # noqa: E402

LETTERS, DIGITS = "ABEKMHOPCTYX", "0123456789"
REGIONS = ["77", "97", "99", "177", "197", "199", "777", "50", "90", "150", "750", "78", "98", "178", "23", "123", "16"]
START = datetime(2026, 9, 1, tzinfo=timezone.utc)
DAYS = 60
CHUNK = 20_000
KEEP = timedelta(days=3650)


def plate_text(rng: random.Random) -> str:
    return (
        rng.choice(LETTERS)
        + "".join(rng.choices(DIGITS, k=3))
        + "".join(rng.choices(LETTERS, k=2))
        + rng.choice(REGIONS)
    )


def misread(text: str, rng: random.Random) -> str:
    look_alike = {"0": "O", "O": "0", "8": "B", "B": "8", "C": "O", "7": "T", "T": "7", "A": "4"}
    at = rng.randrange(len(text))
    way = rng.choice(("look-alike", "wrong", "dropped"))
    if way == "look-alike" and text[at] in look_alike:
        return text[:at] + look_alike[text[at]] + text[at + 1 :]
    if way == "dropped":
        return text[:at] + text[at + 1 :]
    return text[:at] + rng.choice(DIGITS if text[at].isdigit() else LETTERS) + text[at + 1 :]


def fill(store: Store, reads: int, rng: random.Random) -> tuple[list[str], float]:
    """`reads` reads of regular vehicles and passers-by, their plates and keys, and visits: the plates' texts."""
    regulars = list({plate_text(rng) for _ in range(30_000)})
    started = time.perf_counter()
    texts: dict[str, int] = {}
    plates, plate_keys = [], []

    def plate_id(text_: str, at: datetime) -> int:
        if text_ not in texts:
            texts[text_] = len(texts) + 1
            plates.append(
                {"id": texts[text_], "text": text_, "label": "", "tags": [], "first_seen_at": at, "last_seen_at": at}
            )
            plate_keys.extend({"key": key, "plate_id": texts[text_]} for key in keys(text_))
        return texts[text_]

    inside: dict[int, int] = {}
    visits, read_rows, next_read = [], [], 1
    span = DAYS * 86400
    moments = sorted(rng.uniform(0, span) for _ in range(reads))
    with store.engine.begin() as connection:
        for second in moments:
            at = START + timedelta(seconds=second)
            text_ = rng.choice(regulars) if rng.random() < 0.7 else plate_text(rng)
            pid = plate_id(text_, at)
            direction = rng.choice(("in", "out")) if rng.random() < 0.25 else None
            read_rows.append(
                {
                    "id": next_read,
                    "camera_id": f"cam-{rng.randrange(20):02d}",
                    "source": "",
                    "track": 1,
                    "seen_at": at,
                    "last_seen_at": at,
                    "text": text_,
                    "read_text": text_,
                    "text_score": 0.9,
                    "candidates": [[text_, 0.9]],
                    "box": [0, 0, 1, 1],
                    "readings": 5,
                    "motion": None,
                    "direction": direction,
                    "crop": None,
                    "plate_id": pid,
                }
            )
            if direction == "in" and pid not in inside:
                visits.append(
                    {
                        "plate_id": pid,
                        "entry_read_id": next_read,
                        "exit_read_id": None,
                        "entered_at": at,
                        "exited_at": None,
                        "state": "inside",
                        "overstay_alerted": False,
                    }
                )
                inside[pid] = len(visits) - 1
            elif direction == "out" and pid in inside:
                visit = visits[inside.pop(pid)]
                visit.update(exit_read_id=next_read, exited_at=at, state="left")
            next_read += 1
            if len(read_rows) >= CHUNK:
                _flush(connection, plates, plate_keys, read_rows)
        _flush(connection, plates, plate_keys, read_rows)
        # As the writer's absent timer would have: a store never holds visits open past it. Left open, the 60 days'
        # unreturned entries (52,842 of them) made every check of the timer during the writes a scan of the visits.
        end = START + timedelta(days=DAYS) - VisitRules().absent_after
        for visit in visits:
            if visit["state"] == "inside" and visit["entered_at"] < end:
                visit["state"] = "absent"
        for first in range(0, len(visits), CHUNK):
            connection.execute(insert(VisitRow), visits[first : first + CHUNK])
    if store.backend == "postgresql":
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            # The ids above were given, not drawn: the sequences start past them for the writer's rows.
            for table in ("plates", "reads", "visits"):
                connection.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}")
                )
            connection.execute(text("VACUUM ANALYZE"))
    return list(texts), time.perf_counter() - started


def _flush(connection, plates: list, plate_keys: list, read_rows: list) -> None:
    # Plates first: the reads refer to them.
    for rows, table in ((plates, PlateRow), (plate_keys, PlateKey), (read_rows, ReadRow)):
        for first in range(0, len(rows), CHUNK):
            connection.execute(insert(table), rows[first : first + CHUNK])
        rows.clear()


def percentile(values: list[float], share: float) -> float:
    return sorted(values)[min(len(values) - 1, int(share * len(values)))]


def timed(call, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(name: str, store: Store, reads: int, searches: int, writes: int, size) -> None:
    rng = random.Random(7)
    texts, fill_s = fill(store, reads, rng)
    print(f"{name}: {reads:,} reads, {len(texts):,} plates stored in {fill_s:.0f} s")
    queries = [misread(rng.choice(texts), rng) for _ in range(searches)]
    with store.session() as session:
        found = []

        def one(query=None):
            found.append(search.search_reads(session, search.ReadQuery(plate=query, limit=100)))

        fuzzy = [timed(lambda q=q: one(q), 1)[0] for q in queries]
        hits = sum(1 for answer in found if answer["reads"])
        now = START + timedelta(days=DAYS)
        inside = timed(lambda: search.inside_now(session, now, limit=100), 50)
        inside_count = session.scalar(select(func.count()).select_from(VisitRow).where(VisitRow.state == "inside"))
    print(
        f"{name}: fuzzy plate search p50 {statistics.median(fuzzy):.1f} ms, p90 {percentile(fuzzy, 0.9):.1f} ms "
        f"({searches} texts one character off, {hits} found reads); inside now (first 100 of {inside_count:,}) "
        f"p50 {statistics.median(inside):.1f} ms, p90 {percentile(inside, 0.9):.1f} ms"
    )
    at = START + timedelta(days=DAYS)
    rates = {}
    for kind, roles, count in (
        ("cameras with no role", (None,), writes),
        ("entrances and exits", ("in", "out"), writes // 4),
    ):
        # Kept for ten years: the purge would forget most of the synthetic 60 days the moment the writer starts.
        writer = StoreWriter(store, VisitRules(), retention=Retention(KEEP, KEEP), live=False)
        sightings = []
        for index in range(count):
            text_ = rng.choice(texts) if rng.random() < 0.7 else plate_text(rng)
            moment = at + timedelta(seconds=index)
            direction = rng.choice(roles)
            sightings.append(
                Sighting("cam-00", moment, moment, text_, 0.9, [(text_, 0.9)], [0, 0, 1, 1], direction=direction)
            )
        at += timedelta(seconds=count)
        started = time.perf_counter()
        for sighting in sightings:
            writer.write(sighting)
        writer.close()  # returns once the queue is written
        rates[kind] = writer.written / (time.perf_counter() - started)
        if writer.written != count:
            print(f"{name}: only {writer.written} of {count} reads written")
        store = Store(store.url)
    print(
        f"{name}: writes through the writer ({writes:,} and {writes // 4:,} queued at once): "
        + ", ".join(f"{kind} {rate:,.0f} reads a second" for kind, rate in rates.items())
    )
    megabytes = size() / 2**20
    print(
        f"{name}: {megabytes:,.0f} MiB, {megabytes * 1e6 / (reads + writes + writes // 4):,.0f} MiB per million reads"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=1_000_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20_000)
    parser.add_argument("--databases", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite", "postgresql"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="plates-store-scale-") as folder:
        if "sqlite" in args.databases:
            path = Path(folder) / "site.db"
            store = Store(str(path))
            measure(
                "sqlite",
                store,
                args.reads,
                args.searches,
                args.writes,
                lambda: sum(p.stat().st_size for p in Path(folder).glob("site.db*")),
            )
        if "postgresql" in args.databases:
            server = Postgres()
            try:
                server.start()
                store = Store(server.url)

                def size() -> int:
                    with Store(server.url, migrate=False).engine.connect() as connection:
                        return connection.scalar(text("SELECT pg_database_size(current_database())"))

                measure("postgresql", store, args.reads, args.searches, args.writes, size)
            finally:
                server.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
