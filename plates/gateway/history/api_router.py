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
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathParameter
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, Field

from plates.gateway.errors import Refusal
from plates.recognition.edits import CYRILLIC_LETTERS
from plates.store import corrections, search
from plates.store.corrections import NotFound
from plates.store.search import ReadQuery
from plates.watch.site import CAMERA_ID


def _known_parameters(request: Request) -> None:
    """A query parameter the route does not take is refused: a typo (`plates=`) must not widen a search silently."""
    route = request.scope.get("route")
    allowed = {parameter.alias for parameter in route.dependant.query_params} if route is not None else set()
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        message = (
            f"unknown query parameter {unknown[0][:40]!r} (this route takes {', '.join(sorted(allowed)) or 'none'})"
        )
        raise Refusal(400, "invalid_request", message)


router = APIRouter(prefix="/v1/history", tags=["the site's history"], dependencies=[Depends(_known_parameters)])
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
# Row ids fit in 63 bits in both databases; 2**53, the largest whole number a JSON number holds exactly everywhere.
Id = Annotated[int, PathParameter(ge=1, le=2**53)]
CSV_COLUMNS = ("id", "seen_at", "camera_id", "plate", "text", "read_text", "text_score", "direction", "crop")


def _store(request: Request):
    return request.app.state.store


def _utc(text: str | None) -> datetime | None:
    """A query's time in UTC, as the store keeps it; naive, it is UTC. One whose UTC falls outside years 1 to 9999
    is the first or last moment there is. Parsed here, not by pydantic, which also takes "0.5" for a time."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text[:64].replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise Refusal(400, "invalid_request", f"{text[:40]!r} is no ISO 8601 time (2026-11-28T01:00:00Z)") from None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    try:
        return aware.astimezone(timezone.utc)
    except OverflowError:
        edge = datetime.min if aware.year == 1 else datetime.max
        return edge.replace(tzinfo=timezone.utc)


DATE_TIME = {"format": "date-time"}
# The query's parameters, bounded in the schema itself: a request the schema allows is answered, one it does not is
# a 400 that names the parameter (plates.gateway.app.invalid_request).
PlateText = Annotated[
    str | None,
    Query(
        description="A plate as a person types it (Cyrillic or Latin, spaces and dashes allowed)",
        pattern=f"^[0-9A-Za-z{CYRILLIC_LETTERS} -]{{1,24}}$",
    ),
]
CameraId = Annotated[str | None, Query(description="One camera's reads", pattern=CAMERA_ID.pattern.join("^$"))]
Since = Annotated[
    str | None, Query(description="From this time (ISO 8601; without a zone, UTC)", json_schema_extra=DATE_TIME)
]
Until = Annotated[str | None, Query(description="Before this time", json_schema_extra=DATE_TIME)]
Distance = Annotated[float, Query(ge=0, le=2, description="How far a plate may be from `plate`: 0.5 a look-alike")]
Limit = Annotated[int, Query(ge=1, le=search.MAX_LIMIT)]
Offset = Annotated[int, Query(ge=0, le=10**9)]


def _search(request: Request, query: ReadQuery) -> dict:
    if query.plate is not None:
        try:
            search.searched_text(query.plate)
        except ValueError:  # the schema's characters, but longer than any plate: none is near
            return {"plates": [], "reads": []}
    with _store(request).session() as session:
        return search.search_reads(session, query)


@router.get("/reads", responses=ERRORS, summary="Reads, newest first: by plate (fuzzy), camera and time span")
def reads(
    request: Request,
    plate: PlateText = None,
    camera_id: CameraId = None,
    since: Since = None,
    until: Until = None,
    max_distance: Distance = 1.0,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict:
    return _search(request, ReadQuery(plate, max_distance, camera_id, _utc(since), _utc(until), limit, offset))


@router.get(
    "/reads.csv",
    responses={**ERRORS, 200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
    response_class=Response,
    summary="The same search as CSV, up to 1,000 reads",
)
def reads_csv(
    request: Request,
    plate: PlateText = None,
    camera_id: CameraId = None,
    since: Since = None,
    until: Until = None,
    max_distance: Distance = 1.0,
) -> Response:
    query = ReadQuery(plate, max_distance, camera_id, _utc(since), _utc(until), search.MAX_LIMIT, 0)
    found = _search(request, query)
    text = io.StringIO()
    writer = csv.DictWriter(text, CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(found["reads"])
    headers = {"Content-Disposition": 'attachment; filename="reads.csv"'}
    return Response(text.getvalue(), media_type="text/csv", headers=headers)


@router.get("/inside", responses=ERRORS, summary="The vehicles inside now, the longest first")
def inside(
    request: Request,
    longer_than_minutes: Annotated[float | None, Query(ge=0, le=10**6)] = None,
    limit: Limit = 100,
) -> list[dict]:
    longer = timedelta(minutes=longer_than_minutes) if longer_than_minutes is not None else None
    with _store(request).session() as session:
        return search.inside_now(session, datetime.now(timezone.utc), longer, limit)


@router.get("/visits", responses=ERRORS, summary="Visits, newest first, in a time span")
def visits(request: Request, since: Since = None, until: Until = None, limit: Limit = 100) -> list[dict]:
    with _store(request).session() as session:
        return search.visits(session, datetime.now(timezone.utc), _utc(since), _utc(until), limit=limit)


@router.get("/counts", responses=ERRORS, summary="Reads per hour or per day (UTC)")
def counts(
    request: Request,
    by: Literal["hour", "day"] = "hour",
    camera_id: CameraId = None,
    since: Since = None,
    until: Until = None,
) -> list[dict]:
    with _store(request).session() as session:
        return search.counts(session, by, _utc(since), _utc(until), camera_id)


@router.get("/plates/{plate_id}", responses=ERRORS, summary="A plate: its label, tags, reads and visits")
def plate(request: Request, plate_id: Id) -> dict:
    with _store(request).session() as session:
        found = search.plate_history(session, plate_id, datetime.now(timezone.utc))
    if found is None:
        raise Refusal(404, "not_found", f"no plate {plate_id}")
    return found


class Correction(BaseModel):
    text: str = Field(
        description="The plate as a person reads it on the crop (Cyrillic or Latin)",
        pattern=f"^[0-9A-Za-z{CYRILLIC_LETTERS} -]*[0-9A-Za-z{CYRILLIC_LETTERS}][0-9A-Za-z{CYRILLIC_LETTERS} -]*$",
        max_length=24,
    )


class Merge(BaseModel):
    into: int = Field(description="The plate that this one is", ge=1, le=2**53)


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


@router.put("/plates/{plate_id}/description", responses=ERRORS, summary="A plate's label and tags")
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
