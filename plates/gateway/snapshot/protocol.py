"""The wire format of Plate Recognizer's Snapshot API (`POST /v1/plate-reader/`), as their clients send and read it.

Their fields keep their names, types and case (`plate` in lower case, `box` in whole pixels, scores 0 to 1); where a
field has no meaning here it carries what their documentation says it carries when there is nothing to report
(docs/gateway.md). This service's own fields sit beside theirs: `text`, `text_score` and `subject` in each result,
and `unread`, the plates found but not read, which their `results` never hold.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from plates.client.service import Plate
from plates.exceptions import InvalidInputError
from plates.gateway.forms import PHOTO
from plates.gateway.snapshot.options import SERVED, UNSET

PATH = "/v1/plate-reader/"
COUNTRY = "ru"  # the code their country list gives Russia: every plate this service reads is a Russian plate


class Box(BaseModel):
    xmin: int
    ymin: int
    xmax: int
    ymax: int


class Region(BaseModel):
    code: str = Field(description='Country of the plate: always "ru", the only country this service reads.')
    score: float = Field(description="The text's probability, which is always that of a Russian plate format.")


class Candidate(BaseModel):
    plate: str = Field(description="A likely text of the plate, in lower case.")
    score: float


class Vehicle(BaseModel):
    """What their API answers where it finds no vehicle: this service does not look for vehicles."""

    score: float = 0.0
    type: str = "Unknown"
    box: Box = Box(xmin=0, ymin=0, xmax=0, ymax=0)


class Subject(BaseModel):
    code: str = Field(description='The region code at the end of the plate, as written: "77", "197".')
    name: str = Field(description='The federal subject that code belongs to, in English: "Moscow".')


class Result(BaseModel):
    box: Box = Field(description="The plate's corners in the photo's pixels, the photo turned upright (EXIF).")
    plate: str = Field(description="Text of the plate, in lower case, Latin letters: b840ck197.")
    region: Region
    score: float = Field(description="Confidence of the reading: the probability of the text.")
    candidates: list[Candidate] = Field(description="The likeliest texts, best first; the first is `plate`.")
    dscore: float = Field(description="Confidence of the detection.")
    vehicle: Vehicle = Field(default_factory=Vehicle)
    text: str = Field(description="This service: the text in its canonical form, upper case: B840CK197.")
    text_score: float = Field(description="This service: the probability of `text` (the same as `score`).")
    subject: Subject | None = Field(
        description="This service: the region of the plate; null for a code in no region's list."
    )


class Unread(BaseModel):
    """This service: a plate found but not read as a valid Russian plate, or read below the server's threshold."""

    box: Box
    dscore: float
    candidates: list[Candidate] = Field(description="Texts the reader found possible, however unlikely.")


class Usage(BaseModel):
    calls: int = Field(description="Photos read for this API key this month (UTC), this one included.")
    max_calls: int = Field(description="The key's quota of photos a month; 0 where it has none.")


class Reading(BaseModel):
    processing_time: float = Field(description="Milliseconds the gateway spent on the request, once it had it.")
    results: list[Result]
    filename: str | None = Field(description="The upload's file name as the client sent it.")
    version: int = 1
    camera_id: str | None = Field(description="The request's camera_id, sent back.")
    timestamp: str = Field(
        description="The request's timestamp, or the time it was received: ISO 8601, UTC; a "
        "time whose UTC falls outside the years 1 to 9999 keeps the offset it was sent with."
    )
    image_width: int = Field(description="The photo's width in pixels, turned upright.")
    image_height: int
    unread: list[Unread] = Field(description="This service: plates found but not read.")
    usage: Usage


class ErrorDetail(BaseModel):
    code: str = Field(description="The cause, for programs: body_too_large, content_encoding, unauthorized, ...")
    message: str = Field(description="The cause, for people.")
    request_id: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail
    detail: str = Field(description="The message again, where Plate Recognizer's errors put it.")
    status_code: int = Field(description="The HTTP status again, where Plate Recognizer's errors put it.")


# Each option's values in the schema: those served, and those that leave it off.
Option = {name: Literal[(*served, *UNSET)] for name, served in SERVED.items()}


class EngineConfig(BaseModel):
    """The engine options of Plate Recognizer's `config` that this service serves; other keys are ignored, and
    detection_mode "vehicle" is refused with 400. An option left off may also be null, false, "" or "none"."""

    model_config = {"extra": "allow"}

    threshold_d: float | None = Field(default=0.0, ge=0, le=1, description="Plates detected below it are left out.")
    threshold_o: float | None = Field(
        default=0.0, ge=0, le=1, description="Plates read below it are answered in `unread`."
    )
    region: Option["region"] | None = Field(
        default=None,
        description="strict: a plate whose region code is in no region's list is answered in `unread` "
        "(every reading is a valid Russian format already).",
    )
    detection_rule: Option["detection_rule"] | None = Field(
        default=None, description="Accepted: no vehicle is looked for, so no plate is left out for being outside one."
    )
    mode: Option["mode"] | None = Field(
        default=None, description="Accepted: the reader already looks again only where its first looks disagree."
    )
    detection_mode: Option["detection_mode"] | None = Field(
        default=None, description='"plate" only: "vehicle" is refused.'
    )


class Form(BaseModel):
    """The multipart form of a request (documentation only: the endpoint parses the form itself). A text field left
    out is absent, never null."""

    # Their API takes more than this service reads, and clients send what they were written for: text fields beyond
    # these are accepted and ignored; a second file is refused (one photo a request).
    model_config = {"extra": "allow"}

    upload: bytes = Field(description=f"The photo file, or its bytes in base64 as a text field: {PHOTO}")
    # Any value: the gateway never reads it, so nothing sent in it is refused.
    regions: Any = Field(
        default=None,
        description="Region codes, the field repeated for each: accepted and ignored, "
        "this service reads Russian plates.",
    )
    camera_id: str = Field(default=None, description="Sent back as given.")
    timestamp: datetime = Field(
        default=None, description="RFC 3339 (ISO 8601), UTC where it has no offset; sent back in their format."
    )
    config: EngineConfig = Field(default=None, description="A JSON object, as a text field.")
    mmc: Literal["false", "False", "0"] = Field(
        default=None, description="false, or left out: true (make, model and colour) is refused with 400."
    )


def box_of(corners: list[float]) -> Box:
    xmin, ymin, xmax, ymax = (max(0, round(v)) for v in corners)
    return Box(xmin=xmin, ymin=ymin, xmax=xmax, ymax=ymax)


def candidates_of(plate: Plate) -> list[Candidate]:
    texts = plate.candidates or ([(plate.text, plate.text_score)] if plate.text else [])
    return [Candidate(plate=text.lower(), score=score) for text, score in texts]


def result_of(plate: Plate) -> Result:
    """A read plate (its text is not None) as their result, with this service's fields beside."""
    subject = plate.region
    return Result(
        box=box_of(plate.box),
        plate=plate.text.lower(),
        region=Region(code=COUNTRY, score=plate.text_score),
        score=plate.text_score,
        candidates=candidates_of(plate),
        dscore=plate.score,
        text=plate.text,
        text_score=plate.text_score,
        subject=Subject(code=subject.code, name=subject.name) if subject else None,
    )


def unread_of(plate: Plate) -> Unread:
    return Unread(box=box_of(plate.box), dscore=plate.score, candidates=candidates_of(plate))


def iso_for_python(given: str) -> str:
    """An RFC 3339 time as Python 3.10's fromisoformat reads it: no Z (UTC), at most 6 digits of a second's
    fraction, a T between date and time whatever its case."""
    text = given.strip()
    text = re.sub(r"[zZ]$", "+00:00", text)
    text = re.sub(r"^(\d{4}-\d{2}-\d{2})[tT ]", r"\1T", text)
    return re.sub(r"(\.\d{6})\d+", r"\1", text)


def timestamp_of(given: str | None, now: datetime | None = None) -> str:
    """`given` (ISO 8601, UTC where it names no offset) or `now`, written as their API writes times:
    2020-10-12T16:17:27.574008Z."""
    if given is None:
        moment = now or datetime.now(timezone.utc)
    else:
        try:
            moment = datetime.fromisoformat(iso_for_python(given))
        except ValueError as error:
            message = f"timestamp {given[:40]!r} is not ISO 8601, such as 2019-08-19T13:11:25"
            raise InvalidInputError(message) from error
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        try:
            moment = moment.astimezone(timezone.utc)
        except OverflowError:  # 0001-01-01T00:00:00+01:00 is in year 0 in UTC, which datetime cannot hold
            return moment.isoformat(timespec="microseconds")
    # isoformat, not strftime: strftime writes year 1 as "1", not "0001".
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
