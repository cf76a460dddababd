"""The routes: Plate Recognizer's plate reader, and the operations' health and metrics. Kept thin: the work is in
serving (the photo), the gate (keys, limits, logs) and health (readiness)."""

from __future__ import annotations

import base64
import binascii

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser

from plates.gateway.errors import Refusal
from plates.gateway.protocol import PATH, ErrorBody, Form, Reading

router = APIRouter()

MAX_FIELDS = 64  # their clients send a handful; `regions` may repeat

ERRORS = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "No `upload`, `upload_url` sent, a malformed form or timestamp, or a file that is not a whole JPEG or "
        "PNG photo (the message says which)",
        401: "No API key, or not a valid one (`WWW-Authenticate: Token`)",
        408: "The request's headers or body took too long to arrive",
        413: "The body is larger than the gateway takes",
        415: "A compressed body (any `Content-Encoding`), or a body that is not a form",
        429: "Too many photos in flight, overall or for this key, or the recognizer's queue is full: try again "
        "after `Retry-After` seconds",
        503: "The recognizer does not answer: try again after `Retry-After` seconds",
        504: "The recognizer took longer than the gateway waits",
    }.items()
}
FORM_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {"schema": Form.model_json_schema()},
            "application/x-www-form-urlencoded": {"schema": Form.model_json_schema()},
        },
    }
}


@router.post(
    PATH,
    status_code=201,
    response_model=Reading,
    responses=ERRORS,
    openapi_extra=FORM_BODY,
    summary="Read the licence plates of a photo",
    description="Plate Recognizer's Snapshot API: the photo in the form field `upload`; every plate read in "
    "`results`, every plate found but not read in `unread`.",
)
@router.post(PATH.rstrip("/"), status_code=201, include_in_schema=False)
async def read_plates(request: Request) -> Response:
    form = await read_form(request, request.app.state.settings.max_body_bytes)
    if form.get("upload_url") is not None:
        raise Refusal(400, "upload_url_refused", "upload_url is refused: the gateway fetches no URLs (that would let "
                      "anyone make it reach any address); send the photo itself in upload")  # fmt: skip
    photo, filename = await upload_of(form)
    async with request.app.state.in_flight.photo():
        reading = await request.app.state.reader.read(photo, filename, text(form, "camera_id"), text(form, "timestamp"))
    # Serialized here, from the model built in serving: FastAPI would validate the same model again.
    return Response(reading.model_dump_json(), status_code=201, media_type="application/json")


async def read_form(request: Request, limit: int) -> FormData:
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media == "multipart/form-data":
        parser = MultiPartParser(
            request.headers, request.stream(), max_files=1, max_fields=MAX_FIELDS, max_part_size=limit
        )
        # In memory: the body is already bounded by `limit`, and a read-only container may have no /tmp to spool to.
        parser.spool_max_size = limit
    elif media == "application/x-www-form-urlencoded":
        parser = FormParser(request.headers, request.stream(), max_fields=MAX_FIELDS, max_part_size=limit)
    else:
        raise Refusal(415, "not_a_form", "send the photo as multipart/form-data, in the file field upload")
    try:
        return await parser.parse()
    except MultiPartException as error:
        raise Refusal(400, "invalid_form", f"the form cannot be read: {error.message}") from error


async def upload_of(form: FormData) -> tuple[bytes, str | None]:
    """The photo's bytes and file name: a file field, or its bytes in base64 in a text field (both are theirs)."""
    upload = form.get("upload")
    if isinstance(upload, UploadFile):
        return await upload.read(), upload.filename
    if upload is None:
        raise Refusal(400, "missing_upload", "no upload: send the photo in the multipart/form-data file field upload")
    try:
        return base64.b64decode(upload, validate=True), None
    except (binascii.Error, ValueError) as error:
        message = "upload is a text field but not base64: send the photo as a file"
        raise Refusal(400, "invalid_upload", message) from error


def text(form: FormData, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


@router.get("/healthz", summary="The gateway process lives", tags=["operations"])
async def healthz() -> dict:
    return {"alive": True}


@router.get("/readyz", summary="The last deep health check of Triton: 200 ready, 503 not", tags=["operations"])
async def readyz(request: Request) -> JSONResponse:
    ready, body = request.app.state.health.readiness()
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get("/metrics", summary="Prometheus metrics", tags=["operations"])
async def metrics(request: Request) -> Response:
    content, media_type = request.app.state.metrics.exposition()
    return Response(content, media_type=media_type)
