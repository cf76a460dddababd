"""A Snapshot request's photo through the recognizer, its plates as Plate Recognizer's answer, with the engine options
the request asked for applied."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from plates.client.service import Plate
from plates.exceptions import InvalidInputError
from plates.gateway.errors import Refusal
from plates.gateway.recognizer import Recognizer
from plates.gateway.snapshot.options import Options
from plates.gateway.snapshot.protocol import Reading, Usage, result_of, timestamp_of, unread_of
from plates.gateway.usage import Calls

if TYPE_CHECKING:  # SQLAlchemy loads only where the gateway keeps a store
    from plates.gateway.history.recording import History

FIELD = "upload"  # the form field of the photo, in every message to the client


async def read_snapshot(
    recognizer: Recognizer,
    photo: bytes,
    filename: str | None,
    camera_id: str | None,
    timestamp: str | None,
    options: Options,
    calls: Calls,
    history: History | None = None,
) -> Reading:
    started = time.perf_counter()
    try:
        stamp = timestamp_of(timestamp)
    except InvalidInputError as error:
        raise Refusal(400, "invalid_request", str(error)) from error
    read = await recognizer.read(photo, FIELD)
    found = [plate for plate in read.plates if plate.score >= options.threshold_d]
    results = [plate for plate in found if is_read(plate, options)]
    if history is not None:
        history.remember(camera_id, stamp, results, photo)
    return Reading(
        processing_time=round((time.perf_counter() - started) * 1000, 3),
        results=[result_of(plate) for plate in results],
        filename=filename,
        camera_id=camera_id,
        timestamp=stamp,
        image_width=read.width,
        image_height=read.height,
        unread=[unread_of(plate) for plate in found if not is_read(plate, options)],
        usage=Usage(calls=calls.calls, max_calls=calls.max_calls),
    )


def is_read(plate: Plate, options: Options) -> bool:
    """Whether a plate is answered as read under the request's options, or as found but not read (`unread`)."""
    if plate.text is None or plate.text_score < options.threshold_o:
        return False
    return not (options.region_strict and plate.region is None)
