"""What an operator changes: a read's text, two plates that are one vehicle, a plate's label and tags. Visits
follow the reads they were made of."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from plates.store.records import plate_for
from plates.store.schema import PlateRow, ReadRow, VisitRow
from plates.store.search import searched_text


class NotFound(LookupError):
    pass


def correct_read(session: Session, read_id: int, text: str) -> ReadRow:
    """Give read `read_id` the text `text`: it counts to that plate from now on, and so do the visits it opened or
    closed. The text as read is kept."""
    read = session.get(ReadRow, read_id)
    if read is None:
        raise NotFound(f"no read {read_id}")
    text = searched_text(text)
    plate = plate_for(session, text, read.seen_at)
    read.text, read.plate_id = text, plate.id
    session.execute(
        update(VisitRow)
        .where((VisitRow.entry_read_id == read.id) | (VisitRow.exit_read_id == read.id))
        .values(plate_id=plate.id)
    )
    session.flush()
    return read


def merge_plates(session: Session, source_id: int, target_id: int) -> PlateRow:
    """Plate `source_id` is plate `target_id` (the same vehicle read two ways): its reads and visits move to the
    target, its label and tags join the target's, and it is gone."""
    source, target = session.get(PlateRow, source_id), session.get(PlateRow, target_id)
    if source is None or target is None:
        raise NotFound(f"no plate {source_id if source is None else target_id}")
    if source is target:  # already one
        return target
    session.execute(update(ReadRow).where(ReadRow.plate_id == source.id).values(plate_id=target.id))
    session.execute(update(VisitRow).where(VisitRow.plate_id == source.id).values(plate_id=target.id))
    target.label = target.label or source.label
    target.tags = sorted(set(target.tags) | set(source.tags))
    target.first_seen_at = min(target.first_seen_at, source.first_seen_at)
    target.last_seen_at = max(target.last_seen_at, source.last_seen_at)
    session.delete(source)
    session.flush()
    # Two visits open for one vehicle now: the later entry is the one that counts.
    inside = list(
        session.scalars(
            select(VisitRow)
            .where(VisitRow.plate_id == target.id, VisitRow.state == "inside")
            .order_by(VisitRow.entered_at)
        )
    )
    for visit in inside[:-1]:
        visit.state = "absent"
    return target


def describe_plate(session: Session, plate_id: int, label: str | None, tags: list[str] | None) -> PlateRow:
    plate = session.get(PlateRow, plate_id)
    if plate is None:
        raise NotFound(f"no plate {plate_id}")
    # Printable text only: PostgreSQL refuses a NUL in a string, and a control character has no place in a label.
    if label is not None:
        plate.label = _printable(label)[:200]
    if tags is not None:
        plate.tags = sorted({_printable(tag)[:40] for tag in tags if _printable(tag)})[:20]
    return plate


def _printable(text: str) -> str:
    return "".join(char for char in text if char.isprintable()).strip()
