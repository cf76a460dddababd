"""The store's tables, as SQLAlchemy 2 declares them. A change here is a new migration in
plates/store/migrations/versions (`alembic revision`), never an edit of an old one: a site's database is migrated
on start, not made again."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, types
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

TEXT_LENGTH = 12  # the longest plate the recognizer writes is 9 characters
CAMERA_ID_LENGTH = 64  # as plates.watch.site.CAMERA_ID allows

# SQLite's rowid is what autoincrements there; PostgreSQL's reads outgrow 32 bits at a busy site.
Id = BigInteger().with_variant(Integer(), "sqlite")


class UtcDateTime(types.TypeDecorator):
    """A moment, always in UTC: PostgreSQL keeps a timestamptz, SQLite a naive UTC text that sorts as time does.
    A naive datetime from a caller is refused, since it would be taken for whatever zone the machine is in."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime ({value}) has no zone: give it in UTC")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Base(DeclarativeBase):
    pass


class PlateRow(Base):
    """A vehicle as the site knows it: its text, and what the operator says of it."""

    __tablename__ = "plates"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    text: Mapped[str] = mapped_column(String(TEXT_LENGTH), unique=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    first_seen_at: Mapped[datetime] = mapped_column(UtcDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UtcDateTime)

    # The purge looks for plates not seen within the retention.
    __table_args__ = (Index("ix_plates_last_seen_at", "last_seen_at"),)


class PlateKey(Base):
    """The keys a plate is found by in a fuzzy search (plates.store.fuzzy): its text with look-alike characters
    made one, and that with each character left out in turn. An indexed lookup of a searched text's own keys finds
    every plate within one edit of it among millions, where comparing the text with each plate would not."""

    __tablename__ = "plate_keys"

    key: Mapped[str] = mapped_column(String(TEXT_LENGTH), primary_key=True)
    plate_id: Mapped[int] = mapped_column(Id, ForeignKey("plates.id", ondelete="CASCADE"), primary_key=True)

    __table_args__ = (Index("ix_plate_keys_plate_id", "plate_id"),)


class ReadRow(Base):
    """One event of a camera (a plate followed across frames) or one plate of a photo the gateway read."""

    __tablename__ = "reads"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    camera_id: Mapped[str] = mapped_column(String(CAMERA_ID_LENGTH))
    source: Mapped[str] = mapped_column(String(500), default="")
    track: Mapped[int | None] = mapped_column(Integer)
    seen_at: Mapped[datetime] = mapped_column(UtcDateTime)  # the first frame it was read in
    last_seen_at: Mapped[datetime] = mapped_column(UtcDateTime)
    text: Mapped[str | None] = mapped_column(String(TEXT_LENGTH))  # the operator's correction, else read_text
    read_text: Mapped[str | None] = mapped_column(String(TEXT_LENGTH))  # as the service read it
    text_score: Mapped[float] = mapped_column(Float, default=0.0)
    candidates: Mapped[list] = mapped_column(JSON, default=list)  # [[text, score], ...], best first
    box: Mapped[list] = mapped_column(JSON, default=list)
    readings: Mapped[int] = mapped_column(Integer, default=1)
    motion: Mapped[str | None] = mapped_column(String(8))  # "towards" or "away" from the camera, where it showed
    direction: Mapped[str | None] = mapped_column(String(8))  # "in" or "out" of the site, from the camera's role
    crop: Mapped[str | None] = mapped_column(String(300))  # the best crop's file, relative to the crops folder
    plate_id: Mapped[int | None] = mapped_column(Id, ForeignKey("plates.id", ondelete="SET NULL"))

    __table_args__ = (
        Index("ix_reads_seen_at", "seen_at"),
        Index("ix_reads_camera_seen_at", "camera_id", "seen_at"),
        Index("ix_reads_plate_seen_at", "plate_id", "seen_at"),
    )


class VisitRow(Base):
    """A vehicle's stay: from its read at an entrance to its read at an exit, or to the site's absent timer."""

    __tablename__ = "visits"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    plate_id: Mapped[int] = mapped_column(Id, ForeignKey("plates.id", ondelete="CASCADE"))
    entry_read_id: Mapped[int | None] = mapped_column(Id, ForeignKey("reads.id", ondelete="SET NULL"))
    exit_read_id: Mapped[int | None] = mapped_column(Id, ForeignKey("reads.id", ondelete="SET NULL"))
    entered_at: Mapped[datetime] = mapped_column(UtcDateTime)
    exited_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    state: Mapped[str] = mapped_column(String(8))  # "inside", "left" (read at an exit), "absent" (timed out)
    overstay_alerted: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (
        Index("ix_visits_state_entered_at", "state", "entered_at"),
        Index("ix_visits_plate_entered_at", "plate_id", "entered_at"),
        Index("ix_visits_entered_at", "entered_at"),
        # A read deleted sets its visits' reference to null: without these, each deletion scans every visit.
        Index("ix_visits_entry_read_id", "entry_read_id"),
        Index("ix_visits_exit_read_id", "exit_read_id"),
    )
