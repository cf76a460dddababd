"""Plate Recognizer's Snapshot API: `POST /v1/plate-reader/`. Kept thin: the photo's work is in serving, the engine
options in options, the keys, limits and logs in the gate."""

from __future__ import annotations

import base64
import binascii

from fastapi import APIRouter, Request, Response
from starlette.datastructures import FormData, UploadFile

from plates.gateway.errors import Refusal
from plates.gateway.forms import PHOTO, PHOTO_TYPES, form_schema, read_form, text
from plates.gateway.snapshot.options import options_of
from plates.gateway.snapshot.protocol import PATH, ErrorBody, Form, Reading
from plates.gateway.snapshot.serving import FIELD, read_snapshot

router = APIRouter(tags=["Plate Recognizer's Snapshot API"])
PATHS = (PATH,)  # in the schema; also taken without its final slash

ERRORS = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "No `upload`, `upload_url` sent (it is refused), a malformed form or timestamp, an option that is not "
        "served (`mmc` true, `config` detection_mode vehicle) or cannot be read, or a file that is not a whole JPEG or "
        "PNG photo (the message says which)",
        401: "No API key, or not a valid one (`WWW-Authenticate: Token`)",
        403: "The API key has used its quota of photos for this month",
        408: "The request's headers or body took too long to arrive",
        413: "The body is larger than the gateway takes",
        415: "A compressed body (any `Content-Encoding`), or a body that is not a form",
        429: "Too many photos in flight, overall or for this key, or the recognizer's queue is full: try again "
        "after `Retry-After` seconds",
        503: "The recognizer does not answer: try again after `Retry-After` seconds",
        504: "The recognizer took longer than the gateway waits",
    }.items()
}
FORM_SCHEMA = form_schema(Form)
FORM_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": FORM_SCHEMA,
                "encoding": {"upload": {"contentType": PHOTO_TYPES}, "config": {"contentType": "application/json"}},
            },
            # As Genetec's connector sends it: the photo in base64.
            "application/x-www-form-urlencoded": {
                "schema": FORM_SCHEMA
                | {
                    "properties": FORM_SCHEMA["properties"]
                    | {
                        "upload": {
                            "type": "string",
                            "format": "byte",
                            "description": f"The photo file in base64: {PHOTO}",
                        }
                    }
                },
                "encoding": {"config": {"contentType": "application/json"}},
            },
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
    state = request.app.state
    form = await read_form(request, state.settings.max_body_bytes, FIELD)
    if form.get("upload_url") is not None:
        raise Refusal(
            400,
            "upload_url_refused",
            "upload_url is refused: the gateway fetches no URLs (that would let "
            "anyone make it reach any address); send the photo itself in upload",
        )
    options = options_of(text(form, "config"), text(form, "mmc"))
    photo, filename = await upload_of(form)
    with state.usage.call(request.state.key) as calls:
        async with state.in_flight.photo():
            reading = await read_snapshot(
                state.recognizer,
                photo,
                filename,
                text(form, "camera_id"),
                text(form, "timestamp"),
                options,
                calls,
                state.history,
            )
    # Serialized here, from the model built in serving: FastAPI would validate the same model again.
    return Response(reading.model_dump_json(), status_code=201, media_type="application/json")


async def upload_of(form: FormData) -> tuple[bytes, str | None]:
    """The photo's bytes and file name: a file field, or its bytes in base64 in a text field (both are theirs)."""
    upload = form.get(FIELD)
    if isinstance(upload, UploadFile):
        return await upload.read(), upload.filename
    if upload is None:
        raise Refusal(400, "missing_upload", "no upload: send the photo in the multipart/form-data file field upload")
    try:
        return base64.b64decode(upload, validate=True), None
    except (binascii.Error, ValueError) as error:
        message = "upload is a text field but not base64: send the photo as a file"
        raise Refusal(400, "invalid_upload", message) from error
