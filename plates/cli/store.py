"""plates store: what a site's store remembers (plates watch --store, the gateway's --store), searched from the
command line: reads by plate (fuzzy), camera and time; who is inside; visits; a plate's history; counts; and the
operator's corrections, merges, labels and the purge of old reads (docs/store.md)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from plates.exceptions import InvalidInputError

DEFAULT_STORE = "plates.db"
READ_COLUMNS = ("id", "seen_at", "camera_id", "plate", "text", "read_text", "text_score", "direction", "crop")
VISIT_COLUMNS = ("id", "plate", "label", "state", "entered_at", "exited_at", "dwell_minutes")


def moment(text: str) -> datetime:
    """ISO 8601; without a zone, the machine's own (the operator's wall clock)."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is no ISO 8601 time (2026-11-28T01:00 or ...Z)") from error
    return parsed.astimezone(timezone.utc)


def add_store_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument(
        "--store",
        default=os.environ.get("PLATES_STORE", DEFAULT_STORE),
        metavar="URL",
        help=f"{help}: a SQLite file or a postgresql:// URL (default $PLATES_STORE, else {DEFAULT_STORE})",
    )


def add_store_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "store", help="search what a site's store remembers: reads, plates, visits", description=__doc__
    )
    actions = parser.add_subparsers(dest="action", required=True)

    def action(name: str, help: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help)
        add_store_option(sub, "the store")
        sub.add_argument("--json", action="store_true", help="JSON instead of a table")
        return sub

    search = action("search", "reads, newest first: by plate (look-alikes and one character off count), camera, time")
    search.add_argument("plate", nargs="?", help="a plate's text (Cyrillic or Latin, spaces allowed)")
    search.add_argument("--camera", help="one camera's reads")
    search.add_argument("--since", type=moment, help="from this time (ISO 8601; no zone: this machine's)")
    search.add_argument("--until", type=moment, help="before this time")
    search.add_argument("--max-distance", type=float, default=1.0, help="how far a plate may be (default 1.0)")
    search.add_argument("--limit", type=int, default=50)
    search.add_argument("--csv", type=Path, metavar="FILE", help="every read found as CSV ('-': stdout)")
    inside = action("inside", "the vehicles inside now, the longest first")
    inside.add_argument("--longer-than", type=float, metavar="MINUTES", help="only those inside longer")
    visits = action("visits", "visits, newest first")
    visits.add_argument("--since", type=moment)
    visits.add_argument("--until", type=moment)
    visits.add_argument("--csv", type=Path, metavar="FILE", help="as CSV ('-': stdout)")
    history = action("plate", "a plate's reads and visits")
    history.add_argument("plate")
    counts = action("counts", "reads per hour or per day (UTC)")
    counts.add_argument("--by", choices=("hour", "day"), default="hour")
    counts.add_argument("--camera")
    counts.add_argument("--since", type=moment)
    counts.add_argument("--until", type=moment)
    correct = action("correct", "give a read the text a person reads on its crop; its visit follows")
    correct.add_argument("read_id", type=int)
    correct.add_argument("text")
    merge = action("merge", "two plates are one vehicle: the first's reads and visits go to the second")
    merge.add_argument("source")
    merge.add_argument("target")
    label = action("label", "a plate's label and tags")
    label.add_argument("plate")
    label.add_argument("--label")
    label.add_argument("--tag", action="append", help="a tag (repeat for several; replaces the plate's tags)")
    purge = action("purge", "forget reads, crops and visits older than the site keeps them")
    purge.add_argument("--keep-reads-days", type=float, default=30.0, help="default 30")
    purge.add_argument("--keep-visits-days", type=float, default=365.0, help="default 365")
    purge.add_argument("--crops", type=Path, help="the crops folder, whose files of purged reads go too")
    action("migrate", "bring the store to this version's schema (every command does so on open)")
    parser.set_defaults(run=run_store)
    return parser


def _table(rows: list[dict], columns: tuple[str, ...]) -> str:
    cells = [[("" if row.get(c) is None else str(row.get(c))) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _write_csv(path: Path, rows: list[dict], columns: tuple[str, ...]) -> None:
    stream = sys.stdout if str(path) == "-" else open(path, "w", newline="", encoding="utf-8")
    try:
        writer = csv.DictWriter(stream, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    finally:
        if stream is not sys.stdout:
            stream.close()


def _plate_id(session, text: str) -> int:
    from sqlalchemy import select

    from plates.store.schema import PlateRow
    from plates.store.search import searched_text

    plate_id = session.scalar(select(PlateRow.id).where(PlateRow.text == searched_text(text)))
    if plate_id is None:
        raise InvalidInputError(f"no plate {text!r} in the store")
    return plate_id


def run_store(args: argparse.Namespace) -> int:
    # SQLAlchemy and Alembic load here, for this command only.
    from plates.store import corrections, search
    from plates.store.database import Store
    from plates.store.records import Retention, purge

    store = Store(args.store)
    now = datetime.now(timezone.utc)
    try:
        with store.session() as session:
            if args.action == "migrate":
                print(f"store {store.where()}: schema {store.revision()}")
                return 0
            if args.action == "search":
                query = search.ReadQuery(
                    args.plate,
                    args.max_distance,
                    args.camera,
                    args.since,
                    args.until,
                    args.limit if not args.csv else 1000,
                )
                found = search.search_reads(session, query)
                if args.csv:
                    _write_csv(args.csv, found["reads"], READ_COLUMNS)
                    return 0
                output, rows, columns = found, found["reads"], READ_COLUMNS
            elif args.action == "inside":
                longer = timedelta(minutes=args.longer_than) if args.longer_than is not None else None
                rows = search.inside_now(session, now, longer)
                output, columns = rows, VISIT_COLUMNS
            elif args.action == "visits":
                rows = search.visits(session, now, args.since, args.until)
                if args.csv:
                    _write_csv(args.csv, rows, VISIT_COLUMNS)
                    return 0
                output, columns = rows, VISIT_COLUMNS
            elif args.action == "plate":
                output = search.plate_history(session, _plate_id(session, args.plate), now)
                rows, columns = output["reads"], READ_COLUMNS
            elif args.action == "counts":
                rows = search.counts(session, args.by, args.since, args.until, args.camera)
                output, columns = rows, (args.by, "reads")
            elif args.action == "correct":
                read = corrections.correct_read(session, args.read_id, args.text)
                print(f"read {read.id}: {read.read_text} -> {read.text}")
                return 0
            elif args.action == "merge":
                target = corrections.merge_plates(
                    session, _plate_id(session, args.source), _plate_id(session, args.target)
                )
                print(f"{args.source} merged into {target.text}")
                return 0
            elif args.action == "label":
                plate = corrections.describe_plate(session, _plate_id(session, args.plate), args.label, args.tag)
                print(f"{plate.text}: {plate.label!r} {plate.tags}")
                return 0
            else:  # purge
                retention = Retention(timedelta(days=args.keep_reads_days), timedelta(days=args.keep_visits_days))
                crops, reads, old_visits = purge(session, now, retention)
                for name in crops if args.crops else []:
                    (args.crops / name).unlink(missing_ok=True)
                print(f"purged {reads} reads, {len(crops)} crops, {old_visits} visits")
                return 0
    except (ValueError, LookupError) as error:
        raise InvalidInputError(str(error).strip("'\"")) from error
    finally:
        store.close()
    print(json.dumps(output, ensure_ascii=False, indent=1) if args.json else _table(rows, columns))
    return 0
