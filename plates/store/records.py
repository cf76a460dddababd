"""Writing what a site sees: a sighting becomes a read, its plate, and an opened or closed visit.

A visit opens at an entrance read and closes at the same vehicle's exit read. The exit read may differ by a
character (0 for O, 8 for B, a region digit dropped): the open visit whose plate is nearest to any of the read's
candidates, by the watchlist's look-alike-aware distance, is the one it closes, if within `visit_distance`. The read
is then counted to that plate, with its text kept as read. A visit still open past the site's `absent_after` closes
as absent, and one inside past `overstay_after` is due an alert once.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def ranked(texts: list[str], candidates: Iterable[str], max_distance: float) -> list[tuple[str, float]]:
    """The `candidates` within `max_distance` of any of `texts` by the look-alike-aware distance, each with it,
    nearest first (then by text)."""
    scored = ((min(plate_distance(text, candidate) for text in texts), candidate) for candidate in candidates)
    return [(candidate, distance) for distance, candidate in sorted(scored) if distance <= max_distance]


def near_plates(session: Session, texts: list[str], max_distance: float) -> list[tuple[PlateRow, float]]:
    """Plates within `max_distance` of any of `texts` (at most one edit beyond look-alikes, plates.store.fuzzy),
    nearest first, each with its distance."""
    lookup = set().union(*(keys(text) for text in texts)) if texts else set()
    if not lookup:
        return []
    query = select(PlateRow).where(PlateRow.id.in_(select(PlateKey.plate_id).where(PlateKey.key.in_(lookup))))
    plates = {plate.text: plate for plate in session.scalars(query)}
    return [(plates[text], distance) for text, distance in ranked(texts, plates, max_distance)]


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


def _texts(sighting: Sighting) -> list[str]:
    """What a sighting may be: its text, then its candidates."""
    texts = [text for text, _ in sighting.candidates]
    return [sighting.text, *(text for text in texts if text != sighting.text)] if sighting.text else texts


# Values in one IN list: SQLite allows 32,766 bound parameters a statement; well under it, and under PostgreSQL's.
IN_LIST = 1000


@dataclass
class _Plate:
    """A plate as a batch sees it: `id` None until it is made, `stored` its seen span in the database if it is."""

    text: str
    first: datetime
    last: datetime
    id: int | None = None
    stored: tuple[datetime, datetime] | None = None

    def seen(self, moment: datetime) -> None:
        self.first, self.last = min(self.first, moment), max(self.last, moment)


@dataclass
class _Visit:
    plate: _Plate
    entered_at: datetime
    id: int | None = None  # None for one this batch opens
    entry: int | None = None  # the index in the batch of its entrance read, for one this batch opens
    exit: int | None = None  # and of its exit read, for one this batch closes
    exited_at: datetime | None = None


class _Batch:
    """The plates and open visits a batch of sightings can meet, loaded in a few statements, then changed in memory
    as the sightings open and close visits in their order, then written in a few statements more: a dozen round
    trips a batch where reading each sighting against the database took ten a sighting.

    A sighting does what it would alone: an exit read closes the open visit of the nearest plate within the rules'
    distance; an entrance read opens a visit, unless a look-alike of it is already inside (a car that waits at the
    barrier, or comes back through it: only a look-alike counts as the same car there, since a new car one
    character off is as likely)."""

    def __init__(self, session: Session, sightings: list[Sighting], rules: VisitRules) -> None:
        self.session = session
        self.rules = rules
        self.plates: dict[str, _Plate] = {}
        self.inside: dict[str, _Visit] = {}  # by plate text, the earliest open visit of each plate
        self.inside_by_key: dict[str, set[str]] = {}  # fuzzy key -> texts of plates inside
        self.visits: list[_Visit] = []  # those this batch opens or closes
        columns = (PlateRow.id, PlateRow.text, PlateRow.first_seen_at, PlateRow.last_seen_at)
        for id_, text, first, last in self._in(select(*columns), PlateRow.text, {s.text for s in sightings if s.text}):
            self.plates[text] = _Plate(text, first, last, id_, (first, last))
        lookup = set().union(*(keys(text) for s in sightings if s.direction and s.text for text in _texts(s)))
        # Two indexed lookups: the plates under the keys, then their open visits. One statement joining the two made
        # PostgreSQL's planner scan every open visit.
        near = {id_ for (id_,) in self._in(select(PlateKey.plate_id).distinct(), PlateKey.key, lookup)}
        open_visits = (
            select(VisitRow.id, VisitRow.entered_at, *columns)
            .join(PlateRow, PlateRow.id == VisitRow.plate_id)
            .where(VisitRow.state == "inside")
        )
        found = self._in(open_visits, VisitRow.plate_id, near)
        for visit_id, entered_at, id_, text, first, last in sorted(found, key=lambda row: row[1]):
            plate = self.plates.setdefault(text, _Plate(text, first, last, id_, (first, last)))
            if text not in self.inside:  # a plate with several open visits (two sites' writers) closes its earliest
                self._open(_Visit(plate, entered_at, visit_id))

    def _in(self, query, column, values: set) -> list:
        return [
            row for chunk in _chunks(sorted(values)) for row in self.session.execute(query.where(column.in_(chunk)))
        ]

    def _open(self, visit: _Visit) -> None:
        self.inside[visit.plate.text] = visit
        for key in keys(visit.plate.text):
            self.inside_by_key.setdefault(key, set()).add(visit.plate.text)

    def _near_inside(self, texts: list[str], max_distance: float) -> _Plate | None:
        """The nearest plate inside near any of `texts`, over what the batch knows, if one is near."""
        found = {plate for text in texts for key in keys(text) for plate in self.inside_by_key.get(key, ())}
        near = ranked(texts, (plate for plate in found if plate in self.inside), max_distance)
        return self.plates[near[0][0]] if near else None

    def plate_of(self, index: int, sighting: Sighting) -> _Plate | None:
        """The plate `sighting` is counted to, with the visit it opens or closes."""
        if sighting.text is None:
            return None
        texts = _texts(sighting)
        near = None
        if sighting.direction == "out":
            near = self._near_inside(texts, self.rules.visit_distance)  # its own visit, perhaps a character off
        elif sighting.direction == "in":
            near = self._near_inside(texts, LOOK_ALIKE_COST)
        if near is None:
            plate = self.plates.setdefault(sighting.text, _Plate(sighting.text, sighting.seen_at, sighting.seen_at))
            plate.seen(sighting.seen_at)
            if sighting.direction == "in":
                visit = _Visit(plate, sighting.seen_at, entry=index)
                self.visits.append(visit)
                self._open(visit)
            return plate
        near.last = max(near.last, sighting.seen_at)
        if sighting.direction == "out":
            visit = self.inside.pop(near.text)
            visit.exit, visit.exited_at = index, sighting.seen_at
            if visit.id is not None:
                self.visits.append(visit)
        return near

    def write(
        self, sightings: list[Sighting], plates: list[_Plate | None], crops: list[str | None], ids: bool
    ) -> list[int] | None:
        new = [plate for plate in self.plates.values() if plate.id is None]
        if new:
            values = [
                {"text": p.text, "label": "", "tags": [], "first_seen_at": p.first, "last_seen_at": p.last} for p in new
            ]
            made = self.session.execute(insert(PlateRow).returning(PlateRow.id, sort_by_parameter_order=True), values)
            for plate, id_ in zip(new, made.scalars()):
                plate.id = id_
            self.session.execute(
                insert(PlateKey), [{"key": key, "plate_id": p.id} for p in new for key in keys(p.text)]
            )
        widened = [
            {"id": p.id, "first_seen_at": p.first, "last_seen_at": p.last}
            for p in self.plates.values()
            if p.stored is not None and (p.first, p.last) != p.stored
        ]
        if widened:
            self.session.execute(update(PlateRow), widened)
        rows = [
            _read_values(sighting, crop) | {"plate_id": plate.id if plate else None}
            for sighting, plate, crop in zip(sightings, plates, crops)
        ]
        if not (ids or self.visits):
            # Without RETURNING, psycopg sends the rows in one pipeline: 3,285 reads a second through the writer
            # into an empty PostgreSQL database, against 2,354 with it.
            self.session.execute(insert(ReadRow), rows)
            return None
        read_ids = list(self.session.scalars(insert(ReadRow).returning(ReadRow.id, sort_by_parameter_order=True), rows))
        opened = [visit for visit in self.visits if visit.id is None]
        if opened:
            self.session.execute(
                insert(VisitRow),
                [
                    {
                        "plate_id": visit.plate.id,
                        "entry_read_id": read_ids[visit.entry],
                        "entered_at": visit.entered_at,
                        "exit_read_id": None if visit.exit is None else read_ids[visit.exit],
                        "exited_at": visit.exited_at,
                        "state": "inside" if visit.exit is None else "left",
                    }
                    for visit in opened
                ],
            )
        closed = [visit for visit in self.visits if visit.id is not None]
        if closed:
            self.session.execute(
                update(VisitRow),
                [
                    {"id": v.id, "exit_read_id": read_ids[v.exit], "exited_at": v.exited_at, "state": "left"}
                    for v in closed
                ],
            )
        return read_ids


def _chunks(values: list) -> list[list]:
    return [values[first : first + IN_LIST] for first in range(0, len(values), IN_LIST)]


def record_many(
    session: Session, sightings: list[Sighting], rules: VisitRules, crops: list[str | None], ids: bool = False
) -> list[int] | None:
    """Store `sightings` in their order as reads (`crops` their crops' file names), each counted to its plate, made
    where new, and opening or closing its visit; with `ids`, the reads' ids."""
    if not sightings:
        return [] if ids else None
    batch = _Batch(session, sightings, rules)
    plates = [batch.plate_of(index, sighting) for index, sighting in enumerate(sightings)]
    return batch.write(sightings, plates, crops, ids)


def record(session: Session, sighting: Sighting, rules: VisitRules, crop: str | None = None) -> ReadRow:
    """Store one sighting as `record_many` does; its read."""
    return session.get(ReadRow, record_many(session, [sighting], rules, [crop], ids=True)[0])


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
