"""The site's history over HTTP, where the gateway is given a store (`--store`): reads searched by plate (fuzzy),
camera and time, as JSON or CSV; who is inside; visits; a plate's page; counts; the operator's corrections, merges and
labels; each read's crop; and the page for people at /history. Behind the gateway's keys, as the photo routes are.

The queries run on the threads of the application's pool (sync endpoints): SQLAlchemy's sessions are synchronous,
and a search never holds up a photo's event loop.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi import Path as PathParameter
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, Field

from plates.gateway.errors import Refusal
from plates.store import corrections, search
from plates.store.corrections import NotFound
from plates.store.search import ReadQuery
from plates.watch.site import CAMERA_ID

router = APIRouter(prefix="/v1/history", tags=["the site's history"])
page_router = APIRouter(tags=["the site's history"])

PAGE = (Path(__file__).parent / "page.html").read_text()
# As the home page's: its own script, crops as blob: URLs of this origin's answers.
POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
CROP = re.compile(r"\d{4}-\d{2}-\d{2}/[0-9a-f]{32}\.jpg")
ERRORS = {
    400: {"description": "A plate that is no plate, a time that is no ISO 8601 time, a limit out of range"},
    401: {"description": "No API key, or not a valid one"},
    404: {"description": "No such read, plate or crop"},
}
MAX_OFFSET = 10**9
# Row ids fit in 63 bits in both databases; a bigger number in a path is refused by its schema, not by the database.
Id = Annotated[int, PathParameter(ge=1, le=2**62)]
CSV_COLUMNS = ("id", "seen_at", "camera_id", "plate", "text", "read_text", "text_score", "direction", "crop")


def _store(request: Request):
    return request.app.state.store


def _moment(text: str | None, name: str) -> datetime | None:
    if text is None or text == "":
        return None
    try:
        moment = datetime.fromisoformat(text[:40].replace("Z", "+00:00"))
        # In UTC, as the store keeps it: a time whose UTC falls outside years 1 to 9999 is refused here.
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise Refusal(400, "invalid_request", f"{name} {text[:40]!r} is no ISO 8601 time (2026-11-28T01:00Z)") from None


def _camera(camera_id: str | None) -> str | None:
    if not camera_id:
        return None
    if not CAMERA_ID.fullmatch(camera_id):
        raise Refusal(400, "invalid_request", f"camera_id {camera_id[:40]!r}: 1 to 64 letters, digits, '_' or '-'")
    return camera_id


def _limit(limit: int) -> int:
    if not 1 <= limit <= search.MAX_LIMIT:
        raise Refusal(400, "invalid_request", f"limit must be 1 to {search.MAX_LIMIT}, got {limit}")
    return limit


def _query(plate, camera_id, since, until, max_distance, limit, offset) -> ReadQuery:
    if not 0 <= max_distance <= 2:
        raise Refusal(400, "invalid_request", f"max_distance must be 0 to 2, got {max_distance}")
    if not 0 <= offset <= MAX_OFFSET:
        raise Refusal(400, "invalid_request", f"offset must be 0 to {MAX_OFFSET:,}, got {offset}")
    return ReadQuery(
        plate or None,
        max_distance,
        _camera(camera_id),
        _moment(since, "since"),
        _moment(until, "until"),
        _limit(limit),
        offset,
    )


def _search(request: Request, query: ReadQuery) -> dict:
    try:
        with _store(request).session() as session:
            return search.search_reads(session, query)
    except ValueError as error:
        raise Refusal(400, "invalid_request", str(error)) from error


@router.get("/reads", responses=ERRORS, summary="Reads, newest first: by plate (fuzzy), camera and time span")
def reads(
    request: Request,
    plate: str | None = None,
    camera_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    max_distance: float = 1.0,
    limit: int = 100,
    offset: int = 0,
) -> dict:
    return _search(request, _query(plate, camera_id, since, until, max_distance, limit, offset))


@router.get(
    "/reads.csv",
    responses={**ERRORS, 200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
    response_class=Response,
    summary="The same search as CSV, up to 1,000 reads",
)
def reads_csv(
    request: Request,
    plate: str | None = None,
    camera_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    max_distance: float = 1.0,
) -> Response:
    found = _search(request, _query(plate, camera_id, since, until, max_distance, search.MAX_LIMIT, 0))
    text = io.StringIO()
    writer = csv.DictWriter(text, CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(found["reads"])
    headers = {"Content-Disposition": 'attachment; filename="reads.csv"'}
    return Response(text.getvalue(), media_type="text/csv", headers=headers)


@router.get("/inside", responses=ERRORS, summary="The vehicles inside now, the longest first")
def inside(request: Request, longer_than_minutes: float | None = None, limit: int = 100) -> list[dict]:
    if longer_than_minutes is not None and not 0 <= longer_than_minutes <= 10**6:
        raise Refusal(400, "invalid_request", "longer_than_minutes must be 0 to 1,000,000")
    longer = timedelta(minutes=longer_than_minutes) if longer_than_minutes is not None else None
    with _store(request).session() as session:
        return search.inside_now(session, datetime.now(timezone.utc), longer, _limit(limit))


@router.get("/visits", responses=ERRORS, summary="Visits, newest first, in a time span")
def visits(request: Request, since: str | None = None, until: str | None = None, limit: int = 100) -> list[dict]:
    with _store(request).session() as session:
        now = datetime.now(timezone.utc)
        return search.visits(session, now, _moment(since, "since"), _moment(until, "until"), limit=_limit(limit))


@router.get("/counts", responses=ERRORS, summary="Reads per hour or per day (UTC)")
def counts(
    request: Request, by: str = "hour", camera_id: str | None = None, since: str | None = None, until: str | None = None
) -> list[dict]:
    if by not in ("hour", "day"):
        raise Refusal(400, "invalid_request", f"by must be hour or day, got {by[:20]!r}")
    with _store(request).session() as session:
        return search.counts(session, by, _moment(since, "since"), _moment(until, "until"), _camera(camera_id))


@router.get("/plates/{plate_id}", responses=ERRORS, summary="A plate: its label, tags, reads and visits")
def plate(request: Request, plate_id: Id) -> dict:
    with _store(request).session() as session:
        found = search.plate_history(session, plate_id, datetime.now(timezone.utc))
    if found is None:
        raise Refusal(404, "not_found", f"no plate {plate_id}")
    return found


class Correction(BaseModel):
    text: str = Field(description="The plate as a person reads it on the crop (Cyrillic or Latin)", max_length=64)


class Merge(BaseModel):
    into: int = Field(description="The plate that this one is", ge=1, le=2**62)


class Description(BaseModel):
    label: str | None = Field(default=None, max_length=200)
    tags: list[str] | None = Field(default=None, max_length=20)


def _change(request: Request, change) -> dict:
    try:
        with _store(request).session() as session:
            return change(session)
    except NotFound as error:
        raise Refusal(404, "not_found", str(error).strip("'\"")) from error
    except ValueError as error:
        raise Refusal(400, "invalid_request", str(error)) from error


@router.post("/reads/{read_id}/correction", responses=ERRORS, summary="Give a read its right text; its visit follows")
def correct(request: Request, read_id: Id, correction: Correction) -> dict:
    def change(session):
        read = corrections.correct_read(session, read_id, correction.text)
        return {"id": read.id, "text": read.text, "read_text": read.read_text, "plate_id": read.plate_id}

    return _change(request, change)


@router.post("/plates/{plate_id}/merge", responses=ERRORS, summary="This plate is another: its reads and visits move")
def merge(request: Request, plate_id: Id, merge: Merge) -> dict:
    return _change(request, lambda session: {"id": corrections.merge_plates(session, plate_id, merge.into).id})


@router.patch("/plates/{plate_id}", responses=ERRORS, summary="A plate's label and tags")
def describe(request: Request, plate_id: Id, description: Description) -> dict:
    def change(session):
        found = corrections.describe_plate(session, plate_id, description.label, description.tags)
        return {"id": found.id, "label": found.label, "tags": found.tags}

    return _change(request, change)


@router.get(
    "/crops/{day}/{name}",
    responses={**ERRORS, 200: {"content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}}}},
    response_class=Response,
    summary="A read's best crop",
)
def crop(request: Request, day: str, name: str) -> Response:
    folder = request.app.state.settings.store_crops
    relative = f"{day}/{name}"
    # Only names the writer makes: no path leaves the crops folder.
    if folder is None or not CROP.fullmatch(relative) or not (Path(folder) / relative).is_file():
        raise Refusal(404, "not_found", f"no crop {relative[:80]!r}")
    return FileResponse(Path(folder) / relative, media_type="image/jpeg")


@page_router.get("/history", response_class=HTMLResponse, summary="The site's history, for people")
def page() -> HTMLResponse:
    return HTMLResponse(PAGE, headers={"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff"})
