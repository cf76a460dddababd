"""A CodeProject.AI request's photo through the recognizer, its plates as their licence plate reader answers them."""

from __future__ import annotations

import time

from plates.client.service import Plate
from plates.gateway.codeproject.protocol import Answer, Prediction
from plates.gateway.recognizer import Recognizer
from plates.gateway.snapshot.protocol import box_of


async def read_alpr(recognizer: Recognizer, photo: bytes, field: str, min_confidence: float) -> Answer:
    """The plates read and detected at `min_confidence` or above, best read first; a plate found but not read is not
    theirs to list.

    `min_confidence` is the detector's bar, as CodeProject.AI's YOLO11 ALPR module applies it (its plate detector's
    confidence) and as their clients' defaults assume (Viseron sends 0.6): this service's text probability is of the
    whole plate, far below their per-character averages, and would leave out most plates at such values."""
    started = time.perf_counter()
    read = await recognizer.read(photo, field)
    plates = sorted(
        (p for p in read.plates if p.text is not None and p.score >= min_confidence),
        key=lambda p: p.text_score,
        reverse=True,
    )
    predictions = [prediction_of(plate) for plate in plates]
    labels = ", ".join(p.label for p in predictions)
    # As their module words it: an ellipsis after more than 3 plates.
    message = f"Found {labels}{'...' if len(predictions) > 3 else ''}" if predictions else "No plates found"
    return Answer(
        message=message,
        predictions=predictions,
        count=len(predictions),
        processMs=round((time.perf_counter() - started) * 1000),
        inferenceMs=round(read.inference_ms),
    )


def prediction_of(plate: Plate) -> Prediction:
    box = box_of(plate.box)
    return Prediction(
        confidence=plate.text_score,
        label=f"Plate: {plate.text}",
        plate=plate.text,
        x_min=box.xmin,
        y_min=box.ymin,
        x_max=box.xmax,
        y_max=box.ymax,
    )
