"""The questions a site asks of its store: a plate's reads by a text that may be a character off, a camera's reads,
a time span's, a plate's history, who is inside now, and counts by hour and day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from plates.recognition.edits import normalize_plate
from plates.store.records import iso, near_plates
from plates.store.schema import TEXT_LENGTH, PlateRow, ReadRow, VisitRow

MAX_LIMIT = 1000  # rows of one page of an answer


@dataclass(frozen=True)
class ReadQuery:
    plate: str | None = None  # a plate's text: the reads of plates within `max_distance` of it
    max_distance: float = 1.0
    camera_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


def searched_text(text: str) -> str:
    """A plate typed by a person (Cyrillic, spaces), as the recognizer writes it; ValueError naming the fault."""
    normalized = normalize_plate(text)
    if not normalized or len(normalized) > TEXT_LENGTH or not normalized.isalnum() or not normalized.isascii():
        raise ValueError(f"plate {text[:40]!r}: not a plate (1 to {TEXT_LENGTH} letters and digits)")
    return normalized


def read_dict(read: ReadRow, plate: str | None) -> dict:
    return {
        "id": read.id,
        "camera_id": read.camera_id,
        "seen_at": iso(read.seen_at),
        "last_seen_at": iso(read.last_seen_at),
        "text": read.text,
        "read_text": read.read_text,
        "plate": plate,
        "plate_id": read.plate_id,
        "text_score": read.text_score,
        "candidates": [{"text": text, "score": score} for text, score in read.candidates],
        "box": read.box,
        "direction": read.direction,
        "motion": read.motion,
        "crop": read.crop,
        "source": read.source,
        "track": read.track,
    }


def _reads(query: ReadQuery) -> Select:
    statement = select(ReadRow, PlateRow.text).outerjoin(PlateRow, PlateRow.id == ReadRow.plate_id)
    if query.camera_id:
        statement = statement.where(ReadRow.camera_id == query.camera_id)
    if query.since:
        statement = statement.where(ReadRow.seen_at >= query.since)
    if query.until:
        statement = statement.where(ReadRow.seen_at < query.until)
    return statement


def search_reads(session: Session, query: ReadQuery) -> dict:
    """The reads that answer `query`, newest first, a page of them; with the plates the text was near to."""
    statement = _reads(query)
    plates: list[dict] = []
    if query.plate:
        near = near_plates(session, [searched_text(query.plate)], query.max_distance)
        plates = [{"id": plate.id, "text": plate.text, "label": plate.label, "distance": d} for plate, d in near]
        statement = statement.where(ReadRow.plate_id.in_([plate["id"] for plate in plates]))
    rows = session.execute(
        statement.order_by(ReadRow.seen_at.desc(), ReadRow.id.desc())
        .limit(max(1, min(query.limit, MAX_LIMIT)))
        .offset(max(0, query.offset))
    ).all()
    return {"plates": plates, "reads": [read_dict(read, text) for read, text in rows]}


def visit_dict(visit: VisitRow, plate: PlateRow, now: datetime) -> dict:
    until = visit.exited_at or (now if visit.state == "inside" else None)
    return {
        "id": visit.id,
        "plate": plate.text,
        "plate_id": plate.id,
        "label": plate.label,
        "state": visit.state,
        "entered_at": iso(visit.entered_at),
        "exited_at": iso(visit.exited_at) if visit.exited_at else None,
        "dwell_minutes": round((until - visit.entered_at).total_seconds() / 60, 1) if until else None,
        "entry_read_id": visit.entry_read_id,
        "exit_read_id": visit.exit_read_id,
        "overstay_alerted": visit.overstay_alerted,
    }


def inside_now(session: Session, now: datetime, longer_than: timedelta | None = None, limit: int = 100) -> list[dict]:
    """The visits open now, the longest inside first; only those inside longer than `longer_than` if given."""
    statement = (
        select(VisitRow, PlateRow).join(PlateRow, PlateRow.id == VisitRow.plate_id).where(VisitRow.state == "inside")
    )
    if longer_than is not None:
        statement = statement.where(VisitRow.entered_at < now - longer_than)
    rows = session.execute(statement.order_by(VisitRow.entered_at).limit(max(1, min(limit, MAX_LIMIT)))).all()
    return [visit_dict(visit, plate, now) for visit, plate in rows]


def visits(
    session: Session,
    now: datetime,
    since: datetime | None = None,
    until: datetime | None = None,
    plate_id: int | None = None,
    limit: int = 100,
) -> list[dict]:
    """Visits that began in a span (or a plate's), newest first."""
    statement = select(VisitRow, PlateRow).join(PlateRow, PlateRow.id == VisitRow.plate_id)
    if since:
        statement = statement.where(VisitRow.entered_at >= since)
    if until:
        statement = statement.where(VisitRow.entered_at < until)
    if plate_id is not None:
        statement = statement.where(VisitRow.plate_id == plate_id)
    rows = session.execute(statement.order_by(VisitRow.entered_at.desc()).limit(max(1, min(limit, MAX_LIMIT)))).all()
    return [visit_dict(visit, plate, now) for visit, plate in rows]


def plate_history(session: Session, plate_id: int, now: datetime, limit: int = 100) -> dict | None:
    plate = session.get(PlateRow, plate_id)
    if plate is None:
        return None
    reads = session.scalars(
        select(ReadRow).where(ReadRow.plate_id == plate_id).order_by(ReadRow.seen_at.desc()).limit(limit)
    )
    return {
        "id": plate.id,
        "text": plate.text,
        "label": plate.label,
        "tags": plate.tags,
        "first_seen_at": iso(plate.first_seen_at),
        "last_seen_at": iso(plate.last_seen_at),
        "reads": [read_dict(read, plate.text) for read in reads],
        "visits": visits(session, now, plate_id=plate_id, limit=limit),
    }


def counts(
    session: Session,
    by: str,
    since: datetime | None = None,
    until: datetime | None = None,
    camera_id: str | None = None,
) -> list[dict]:
    """Reads per hour or per day (UTC), oldest first."""
    if by not in ("hour", "day"):
        raise ValueError(f"counts by hour or day, not {by!r}")
    if session.get_bind().dialect.name == "sqlite":
        bucket = func.strftime("%Y-%m-%dT%H:00:00Z" if by == "hour" else "%Y-%m-%d", ReadRow.seen_at)
    else:
        bucket = func.to_char(
            func.date_trunc(by, func.timezone("UTC", ReadRow.seen_at)),
            'YYYY-MM-DD"T"HH24:00:00"Z"' if by == "hour" else "YYYY-MM-DD",
        )
    statement = select(bucket.label("bucket"), func.count(ReadRow.id))
    if camera_id:
        statement = statement.where(ReadRow.camera_id == camera_id)
    if since:
        statement = statement.where(ReadRow.seen_at >= since)
    if until:
        statement = statement.where(ReadRow.seen_at < until)
    rows = session.execute(statement.group_by("bucket").order_by("bucket")).all()
    return [{by: bucket_value, "reads": count} for bucket_value, count in rows]
