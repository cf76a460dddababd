"""CodeProject.AI Server's licence plate reader: `POST /v1/vision/alpr` (and the legacy `/v1/image/alpr`), and the
server's status routes that video recorders poll before they send photos (Blue Iris, Agent DVR). Kept thin: the
photo's work is in serving; the keys, limits and logs, the same as the Snapshot API's, in the gate."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request, Response
from starlette.datastructures import FormData

from plates.gateway.codeproject.protocol import PATHS, Answer, ErrorAnswer, Form, UpdateAvailable, Version
from plates.gateway.codeproject.serving import read_alpr
from plates.gateway.errors import Refusal
from plates.gateway.forms import PHOTO_TYPES, first_file, form_schema, read_form, text

router = APIRouter(tags=["CodeProject.AI's licence plate reader"])

ERRORS = {
    status: {"model": ErrorAnswer, "description": description}
    for status, description in {
        400: "No file in the form, a malformed form or min_confidence, or a file that is not a whole JPEG or PNG "
        "photo (the message says which)",
        401: "No API key, or not a valid one (`WWW-Authenticate: Token`)",
        403: "The API key has used its quota of photos for this month",
        408: "The request's headers or body took too long to arrive",
        413: "The body is larger than the gateway takes",
        415: "A compressed body (any `Content-Encoding`), or a body that is not a form",
        429: "Too many photos in flight, overall or for this key: try again after `Retry-After` seconds",
        503: "The recognizer does not answer: try again after `Retry-After` seconds",
        504: "The recognizer took longer than the gateway waits",
    }.items()
}
FORM_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {"schema": form_schema(Form), "encoding": {"upload": {"contentType": PHOTO_TYPES}}}
        },
    }
}
# The server's status routes, at their legacy prefix and the one of their server 2.4 on.
STATUS_PREFIXES = ("/v1/status", "/v1/server/status")


async def alpr(request: Request) -> Response:
    state = request.app.state
    form = await read_form(request, state.settings.max_body_bytes)
    found = first_file(form)
    if found is None:
        raise Refusal(
            400,
            "missing_upload",
            "no file in the form: send the photo as a multipart/form-data file, in the field upload (or image)",
        )
    field, upload = found
    min_confidence = min_confidence_of(form)
    photo = await upload.read()
    with state.usage.call(request.state.key):
        async with state.in_flight.photo():
            answer = await read_alpr(state.recognizer, photo, field, min_confidence)
    return Response(answer.model_dump_json(), media_type="application/json")


def min_confidence_of(form: FormData) -> float:
    given = text(form, "min_confidence")
    if given is None:
        return 0.0
    try:
        value = float(given)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise Refusal(400, "invalid_request", f"min_confidence must be a number from 0 to 1, not {given[:40]!r}")
    return value


for number, path in enumerate(PATHS):
    router.add_api_route(
        path,
        alpr,
        methods=["POST"],
        response_model=Answer,
        responses=ERRORS,
        openapi_extra=FORM_BODY,
        summary="Read the licence plates of a photo" + (" (their legacy route)" if number else ""),
        description="CodeProject.AI's licence plate reader: the form's first file is the photo, whatever its field's "
        "name; `min_confidence` leaves out plates detected below it (the detector's confidence, as their YOLO11 ALPR "
        "module applies it).",
        operation_id=f"alpr_{path.split('/')[2]}",
    )


async def version() -> Version:
    return Version()


async def update_available() -> UpdateAvailable:
    # Nothing is fetched: this service is updated by its image, not by the recorder's prompt.
    return UpdateAvailable()


for prefix in STATUS_PREFIXES:
    for route, endpoint, model, summary in (
        ("ping", version, Version, "The server answers (as theirs does, with its version)"),
        ("version", version, Version, "The server's version"),
        ("updateavailable", update_available, UpdateAvailable, "Whether an update is available: never"),
    ):
        router.add_api_route(
            f"{prefix}/{route}",
            endpoint,
            methods=["GET"],
            response_model=model,
            summary=summary,
            tags=["CodeProject.AI's server status"],
            operation_id=f"{prefix[4:].replace('/', '_')}_{route}",
        )
