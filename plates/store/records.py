"""Writing what a site sees: a sighting becomes a read, its plate, and an opened or closed visit.

A visit opens at an entrance read and closes at the same vehicle's exit read. The exit read may differ by a
character (0 for O, 8 for B, a region digit dropped): the open visit whose plate is nearest to any of the read's
candidates, by the watchlist's look-alike-aware distance, is the one it closes, if within `visit_distance`. The read
is then counted to that plate, with its text kept as read. A visit still open past the site's `absent_after` closes
as absent, and one inside past `overstay_after` is due an alert once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from plates.recognition.edits import LOOK_ALIKE_COST, plate_distance
from plates.store.fuzzy import keys
from plates.store.schema import PlateKey, PlateRow, ReadRow, VisitRow
from plates.store.sightings import Sighting


@dataclass(frozen=True)
class VisitRules:
    visit_distance: float = 1.0  # how far an exit read may be from the plate of the visit it closes
    absent_after: timedelta = timedelta(hours=24)  # an open visit older than this closed as absent
    overstay_after: timedelta | None = None  # an open visit older than this is due an overstay alert


@dataclass(frozen=True)
class Retention:
    """How long a site keeps what it saw: plates are personal data, kept no longer than the site needs them."""

    keep_reads: timedelta = timedelta(days=30)  # reads and their crops
    keep_visits: timedelta = timedelta(days=365)  # closed visits


@dataclass(frozen=True)
class Overstay:
    visit_id: int
    plate: str
    label: str
    entered_at: datetime
    camera_id: str  # of the entrance read

    def to_dict(self, now: datetime) -> dict:
        return {
            "visit_id": self.visit_id,
            "plate": self.plate,
            "label": self.label,
            "entered_at": iso(self.entered_at),
            "inside_minutes": round((now - self.entered_at).total_seconds() / 60, 1),
            "camera_id": self.camera_id,
        }


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def plate_for(session: Session, text: str, seen_at: datetime) -> PlateRow:
    """The site's plate of `text`, made (with its search keys) if new; its seen span widened to `seen_at`."""
    plate = session.scalar(select(PlateRow).where(PlateRow.text == text))
    if plate is None:
        plate = PlateRow(text=text, label="", tags=[], first_seen_at=seen_at, last_seen_at=seen_at)
        session.add(plate)
        session.flush()
        session.add_all(PlateKey(key=key, plate_id=plate.id) for key in keys(text))
    else:
        plate.first_seen_at = min(plate.first_seen_at, seen_at)
        plate.last_seen_at = max(plate.last_seen_at, seen_at)
    return plate


def near_plates(
    session: Session, texts: list[str], max_distance: float, inside_only: bool = False
) -> list[tuple[PlateRow, float]]:
    """Plates within `max_distance` of any of `texts` (at most one edit beyond look-alikes, plates.store.fuzzy),
    nearest first, each with its distance; with `inside_only`, only those with a visit open."""
    lookup = set().union(*(keys(text) for text in texts)) if texts else set()
    if not lookup:
        return []
    query = select(PlateRow).where(PlateRow.id.in_(select(PlateKey.plate_id).where(PlateKey.key.in_(lookup))))
    if inside_only:
        # Per plate found, through the visits' (plate, entered_at) index: never a scan of every open visit.
        query = query.where(
            select(VisitRow.id).where(VisitRow.plate_id == PlateRow.id, VisitRow.state == "inside").exists()
        )
    found = []
    for plate in session.scalars(query):
        nearest = min(plate_distance(text, plate.text) for text in texts)
        if nearest <= max_distance:
            found.append((plate, nearest))
    return sorted(found, key=lambda pair: (pair[1], pair[0].text))


def open_visit_of(session: Session, plate_id: int) -> VisitRow | None:
    return session.scalar(
        select(VisitRow).where(VisitRow.plate_id == plate_id, VisitRow.state == "inside").order_by(VisitRow.entered_at)
    )


def _read_values(sighting: Sighting, crop: str | None) -> dict:
    return {
        "camera_id": sighting.camera_id,
        "source": sighting.source[:500],
        "track": sighting.track,
        "seen_at": sighting.seen_at,
        "last_seen_at": sighting.last_seen_at,
        "text": sighting.text,
        "read_text": sighting.text,
        "text_score": sighting.text_score,
        "candidates": [[text, score] for text, score in sighting.candidates],
        "box": list(sighting.box),
        "readings": sighting.readings,
        "motion": sighting.motion,
        "direction": sighting.direction,
        "crop": crop,
    }


def record_many(session: Session, sightings: list[Sighting], rules: VisitRules, crops: list[str | None]) -> None:
    """Store `sightings` as `record` does each: the reads of cameras with no role in a few statements for all of
    them (their plates looked up, made and widened together), then those of entrances and exits one by one, in their
    order, since each may open or close a visit the next one meets."""
    plain = [(sighting, crop) for sighting, crop in zip(sightings, crops) if sighting.direction is None]
    seen: dict[str, tuple[datetime, datetime]] = {}
    for sighting, _ in plain:
        if sighting.text is not None:
            first, last = seen.get(sighting.text, (sighting.seen_at, sighting.seen_at))
            seen[sighting.text] = (min(first, sighting.seen_at), max(last, sighting.seen_at))
    ids = _plate_ids(session, seen)
    if plain:
        rows = [_read_values(sighting, crop) | {"plate_id": ids.get(sighting.text)} for sighting, crop in plain]
        session.execute(insert(ReadRow), rows)
    for sighting, crop in zip(sightings, crops):
        if sighting.direction is not None:
            record(session, sighting, rules, crop)


def _plate_ids(session: Session, seen: dict[str, tuple[datetime, datetime]]) -> dict[str, int]:
    """The ids of the plates of `seen`'s texts, each made (with its keys) where new and its seen span widened."""
    if not seen:
        return {}
    known = session.execute(
        select(PlateRow.text, PlateRow.id, PlateRow.first_seen_at, PlateRow.last_seen_at).where(
            PlateRow.text.in_(list(seen))
        )
    ).all()
    widened = [
        {"id": id_, "first_seen_at": min(first, seen[text][0]), "last_seen_at": max(last, seen[text][1])}
        for text, id_, first, last in known
        if seen[text][0] < first or seen[text][1] > last
    ]
    if widened:
        session.execute(update(PlateRow), widened)
    ids = {text: id_ for text, id_, _, _ in known}
    new = [text for text in seen if text not in ids]
    if new:
        session.execute(
            insert(PlateRow),
            [
                {"text": text, "label": "", "tags": [], "first_seen_at": seen[text][0], "last_seen_at": seen[text][1]}
                for text in new
            ],
        )
        made = dict(session.execute(select(PlateRow.text, PlateRow.id).where(PlateRow.text.in_(new))).all())
        session.execute(insert(PlateKey), [{"key": key, "plate_id": made[text]} for text in new for key in keys(text)])
        ids |= made
    return ids


def record(session: Session, sighting: Sighting, rules: VisitRules, crop: str | None = None) -> ReadRow:
    """Store `sighting` as a read (its crop's file name `crop`), and open or close its visit."""
    read = ReadRow(**_read_values(sighting, crop))
    session.add(read)
    if sighting.text is None:
        session.flush()
        return read
    texts = [text for text, _ in sighting.candidates] or [sighting.text]
    if sighting.text not in texts:
        texts.insert(0, sighting.text)
    if sighting.direction == "out":
        # Its own visit, read again at the exit, perhaps a character off.
        near = near_plates(session, texts, rules.visit_distance, inside_only=True)
    elif sighting.direction == "in":
        # Read again at the entrance (a car that waits at the barrier, or comes back through it): only a look-alike
        # counts as the same car, since a new car one character off is as likely.
        near = near_plates(session, texts, LOOK_ALIKE_COST, inside_only=True)
    else:
        near = []
    plate = near[0][0] if near else plate_for(session, sighting.text, sighting.seen_at)
    plate.last_seen_at = max(plate.last_seen_at, sighting.seen_at)
    read.plate_id = plate.id
    session.flush()
    visit = open_visit_of(session, plate.id) if near else None
    if sighting.direction == "out" and visit is not None:
        visit.exit_read_id, visit.exited_at, visit.state = read.id, sighting.seen_at, "left"
    elif sighting.direction == "in" and visit is None:
        session.add(VisitRow(plate_id=plate.id, entry_read_id=read.id, entered_at=sighting.seen_at, state="inside"))
    session.flush()
    return read


def close_absent(session: Session, now: datetime, rules: VisitRules) -> int:
    """Close as absent the visits still open past the absent timer; how many."""
    result = session.execute(
        update(VisitRow)
        .where(VisitRow.state == "inside", VisitRow.entered_at < now - rules.absent_after)
        .values(state="absent")
    )
    return result.rowcount or 0


def due_overstays(session: Session, now: datetime, rules: VisitRules) -> list[Overstay]:
    """The visits inside past `overstay_after` not yet alerted, marked alerted: each is alerted once."""
    if rules.overstay_after is None:
        return []
    rows = session.execute(
        select(VisitRow, PlateRow, ReadRow.camera_id)
        .join(PlateRow, PlateRow.id == VisitRow.plate_id)
        .outerjoin(ReadRow, ReadRow.id == VisitRow.entry_read_id)
        .where(
            VisitRow.state == "inside",
            VisitRow.overstay_alerted.is_(False),
            VisitRow.entered_at < now - rules.overstay_after,
        )
        .order_by(VisitRow.entered_at)
    ).all()
    for visit, _, _ in rows:
        visit.overstay_alerted = True
    return [
        Overstay(visit.id, plate.text, plate.label, visit.entered_at, camera_id or "")
        for visit, plate, camera_id in rows
    ]


def purge(session: Session, now: datetime, retention: Retention) -> tuple[list[str], int, int]:
    """Forget reads older than the retention's, and closed visits, then plates with neither left and no operator's
    label or tags. The crops' file names of the reads forgotten, and the counts."""
    old = ReadRow.seen_at < now - retention.keep_reads
    crops = [crop for crop in session.scalars(select(ReadRow.crop).where(old, ReadRow.crop.is_not(None)))]
    reads = session.execute(delete(ReadRow).where(old)).rowcount or 0
    visits = (
        session.execute(
            delete(VisitRow).where(VisitRow.state != "inside", VisitRow.entered_at < now - retention.keep_visits)
        ).rowcount
        or 0
    )
    # Plates not seen within the retention, with no read or visit left and nothing the operator said of them.
    orphans = (
        select(PlateRow.id, PlateRow.tags)
        .where(PlateRow.last_seen_at < now - retention.keep_reads, PlateRow.label == "")
        .where(~select(ReadRow.id).where(ReadRow.plate_id == PlateRow.id).exists())
        .where(~select(VisitRow.id).where(VisitRow.plate_id == PlateRow.id).exists())
    )
    gone = [plate_id for plate_id, tags in session.execute(orphans) if not tags]
    for first in range(0, len(gone), 500):
        session.execute(delete(PlateRow).where(PlateRow.id.in_(gone[first : first + 500])))
    return crops, reads, visits
