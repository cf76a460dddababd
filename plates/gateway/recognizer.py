"""The one call to Triton that every API of the gateway makes: a photo's file to plate_recognition over gRPC, its
plates back, whatever shape the API then answers in.

The photo's header is read here first (plates.photos.headers, as the server reads it): a file that is not a whole JPEG
or PNG, or is too large a photo, is refused before it costs Triton anything. What the server refuses still comes back as
the client's 400 with the server's reason, naming the form field the client sent, and Triton's own refusals keep their
meaning: busy is 429 (try again soon) once the photo has been sent again for `busy_wait_s`, down is 503.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from plates.client.retry import RetryPolicy
from plates.client.service import MODEL, OUTPUTS, Plate, plates_from_outputs
from plates.exceptions import QUEUE_REFUSALS, RELOADING, InvalidInputError, PlatesError, not_serving
from plates.gateway.errors import RETRY_BUSY_S, RETRY_DOWN_S, RETRY_RELOADING_S, Refusal
from plates.photos.headers import read_header

# A photo Triton refused as busy is sent again after these pauses (full jitter), for up to `busy_wait_s`: other
# clients (the health check, in-cluster jobs) can fill its queue for a moment, and Triton 2.51's batcher can leave a
# full queue waiting up to 0.5 s (docs/performance.md, The gateway).
BUSY_RETRY = RetryPolicy(first_pause_s=0.02, max_pause_s=0.2)  # only its pauses: the deadline bounds the tries


@dataclass(frozen=True)
class Photo:
    """A photo's plates, and its size turned upright as its EXIF orientation says (the server turns it so)."""

    plates: list[Plate]
    width: int
    height: int
    inference_ms: float  # the time of the call to Triton, its busy retries included


class Recognizer:
    """`await Recognizer(client, timeout, busy_wait_s).read(photo, field)`: `client` is a tritonclient.grpc.aio
    client (or anything with its `infer`); `field` is the form field the photo came in, for the client's messages;
    `reloading()` the models Triton's supervisor is loading again, asked only when plate_recognition is not loaded."""

    def __init__(
        self, client, timeout: float, busy_wait_s: float, reloading: Callable[[], Collection[str]] = tuple
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.busy_wait_s = busy_wait_s
        self.reloading = reloading

    async def read(self, photo: bytes, field: str = "upload") -> Photo:
        try:
            header = read_header(photo, field)
        except InvalidInputError as error:
            raise Refusal(400, "invalid_request", str(error)) from error
        started = time.perf_counter()
        plates = await self.plates(photo, field)
        inference_ms = (time.perf_counter() - started) * 1000
        upright = header.orientation in (5, 6, 7, 8)
        width, height = (header.height, header.width) if upright else (header.width, header.height)
        return Photo(plates, width, height, inference_ms)

    async def plates(self, photo: bytes, field: str = "upload") -> list[Plate]:
        tensor = grpcclient.InferInput("image_bytes", [1], "BYTES")
        # An object array keeps every byte; a numpy bytes_ array would drop trailing NULs.
        tensor.set_data_from_numpy(np.array([photo], dtype=np.object_))
        outputs = [grpcclient.InferRequestedOutput(name) for name in OUTPUTS]
        deadline = time.monotonic() + self.busy_wait_s
        for retry in itertools.count():
            try:
                result = await self.client.infer(MODEL, [tensor], outputs=outputs, client_timeout=self.timeout)
                return plates_from_outputs(*(result.as_numpy(name) for name in OUTPUTS))
            except InferenceServerException as error:
                refusal = triton_refusal(error, self.timeout, field, self.reloading)
                pause = BUSY_RETRY.pause(retry)
                if refusal.code != "triton_busy" or time.monotonic() + pause > deadline:
                    raise refusal from error
            except PlatesError as error:  # outputs that do not agree
                raise Refusal(502, "triton_failed", f"{MODEL} answered what cannot be read: {error}") from error
            await asyncio.sleep(pause)


def triton_refusal(
    error: InferenceServerException,
    timeout: float,
    field: str = "upload",
    reloading: Callable[[], Collection[str]] = tuple,
) -> Refusal:
    """What the client is told when Triton answered an error (gRPC status codes, as tritonclient names them);
    `reloading()`: the models the supervisor says it reloads (plates.client.health.reloading)."""
    status, message = str(error.status()), error.message() or ""
    # plate_recognition itself cannot serve: Triton's own answer, which cannot say why; the supervisor's verdict can.
    if not_serving(MODEL, message):
        if MODEL in reloading():
            return Refusal(503, "triton_reloading", f"{RELOADING} '{MODEL}' ({message})", RETRY_RELOADING_S)
        return Refusal(503, "triton_unavailable", f"the recognizer cannot serve: {message}", RETRY_DOWN_S)
    if status == "StatusCode.INVALID_ARGUMENT":
        return Refusal(400, "invalid_image", in_client_terms(message, field))
    # A dead model's queue refuses too, and its message can hold the queue's words: reloading is checked first.
    if status == "StatusCode.UNAVAILABLE" and RELOADING in message:
        return Refusal(503, "triton_reloading", message, retry_after=RETRY_RELOADING_S)
    if status == "StatusCode.UNAVAILABLE" and any(refusal in message for refusal in QUEUE_REFUSALS):
        return Refusal(429, "triton_busy", f"the recognizer is busy: {message}", retry_after=RETRY_BUSY_S)
    if status == "StatusCode.UNAVAILABLE":
        return Refusal(
            503, "triton_unavailable", f"the recognizer does not answer: {message}", retry_after=RETRY_DOWN_S
        )
    if status == "StatusCode.DEADLINE_EXCEEDED":
        return Refusal(504, "triton_timeout", f"the recognizer took more than {timeout:g} s")
    return Refusal(502, "triton_failed", f"{MODEL} failed: {message}")


def in_client_terms(message: str, field: str = "upload") -> str:
    """The server's reason for refusing a photo, naming the form field the client sent instead of the model's input:
    "plate_recognition: image_bytes is a truncated JPEG: ..." -> "upload is a truncated JPEG: ..."."""
    message = message.removeprefix(f"{MODEL}: ")
    return field + message.removeprefix("image_bytes") if message.startswith("image_bytes") else message
