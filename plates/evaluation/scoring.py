"""Scoring the served pipeline against labelled photos: the logic of `plates eval`, testable without a server.

Matching: a prediction matches a label when their IoU is >= 0.5; pairs are taken greedily, highest IoU first,
each label and each prediction at most once. From the matches:

- detection recall = matched labels / labels; precision = matched predictions / predictions;
- small-plate recall: the same recall over labels narrower than 40 px (x2 - x1 < 40 in the photo's pixels);
- recognition accuracy = of the matched labels that carry a text, those whose prediction's text equals it exactly;
- end-to-end accuracy = of all the labelled texts (per plate, and photo-level), those found exactly among the
  texts the server returned for that photo (one returned text answers one labelled text);
- texts on unmatched boxes: the texts read on predictions that match no labelled plate (signs, logos, and
  plates left unlabelled);
- right readings blanked: labelled texts not returned, but the top candidate of one of the photo's plates whose
  text the server blanked (its text_score under min_text_score): what the threshold cost;
- where reading fails (plates.evaluation.misreads): every labelled text compared with what was read of it, split
  into main field and region code, with the characters confused. A plate's text is compared with its matched
  prediction's; a photo-level text with the photo's returned text nearest to it, where the photo returned any (none
  returned may be a plate not found, which is detection's part).

A plate's top candidate is its text before the server's min_text_score, so `with_min_text_score` re-decides the
texts for another threshold without asking the server again; `sweep` scores several.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from plates.evaluation.manifests import LabelledPhoto
from plates.evaluation.misreads import Misreads, nearest

if TYPE_CHECKING:
    from plates.detection.detector import Detections

IOU_THRESHOLD = 0.5
SMALL_WIDTH = 40.0  # pixels: a labelled plate narrower than this is "small"


class Prediction(Protocol):
    """What `PlatesClient.recognize` returns (`plates.client.service.Plate`)."""

    text: str | None
    box: Sequence[float]
    score: float
    text_score: float
    candidates: Sequence[tuple[str, float]]  # (text, probability), best first, also where text is None


# --------------------------------------------------------------------------------------------------- matching


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two [x1, y1, x2, y2] boxes; 0 where either has no area."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match(
    labels: Sequence[Sequence[float]], predictions: Sequence[Sequence[float]], threshold: float = IOU_THRESHOLD
) -> list[tuple[int, int, float]]:
    """Greedy one-to-one matching of label boxes to predicted boxes: (label index, prediction index, IoU) pairs
    with IoU >= threshold, taken highest IoU first (ties: lower label, then prediction index first)."""
    pairs = [
        (overlap, i, j)
        for i, label in enumerate(labels)
        for j, prediction in enumerate(predictions)
        if (overlap := iou(label, prediction)) >= threshold
    ]
    pairs.sort(key=lambda pair: (-pair[0], pair[1], pair[2]))
    used_labels: set[int] = set()
    used_predictions: set[int] = set()
    matches = []
    for overlap, i, j in pairs:
        if i not in used_labels and j not in used_predictions:
            used_labels.add(i)
            used_predictions.add(j)
            matches.append((i, j, overlap))
    return matches


def same_boxes(reference: Detections, other: Detections, threshold: float = 0.9) -> tuple[int, int, int, float]:
    """How far two detectors agree on one photo: (boxes matched one to one at IoU >= threshold, boxes in
    `reference`, boxes in `other`, the lowest IoU of a matched pair, 1 where there is none)."""
    pairs = match(reference.boxes.tolist(), other.boxes.tolist(), threshold)
    return len(pairs), len(reference), len(other), min((overlap for *_, overlap in pairs), default=1.0)


# ---------------------------------------------------------------------------------------------------- metrics


@dataclass
class Ratio:
    hits: int = 0
    total: int = 0

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    def add(self, hit: bool) -> None:
        self.hits += int(hit)
        self.total += 1

    def to_dict(self) -> dict:
        return {"value": None if self.value is None else round(self.value, 4), "hits": self.hits, "total": self.total}


@dataclass
class PhotoErrors:
    image: str
    missed: list[dict] = field(default_factory=list)  # {"box", "text"}: labelled boxes no prediction matched
    false_positives: list[dict] = field(default_factory=list)  # {"box", "text", "score"}: predictions matching no label
    misread: list[dict] = field(default_factory=list)  # {"box", "predicted_box", "expected", "got"}
    texts_not_found: list[dict] = field(default_factory=list)  # {"expected", "returned"}: end-to-end misses

    def __bool__(self) -> bool:
        return bool(self.missed or self.false_positives or self.misread or self.texts_not_found)

    def to_dict(self) -> dict:
        return {
            "image": self.image,
            "missed": self.missed,
            "false_positives": self.false_positives,
            "misread": self.misread,
            "texts_not_found": self.texts_not_found,
        }


@dataclass
class Report:
    photos: int = 0
    detection_recall: Ratio = field(default_factory=Ratio)  # matched labels / labels
    detection_precision: Ratio = field(default_factory=Ratio)  # matched predictions / predictions
    small_recall: Ratio = field(default_factory=Ratio)  # matched small labels / small labels
    recognition: Ratio = field(default_factory=Ratio)  # exact texts / matched labels with a text
    end_to_end: Ratio = field(default_factory=Ratio)  # labelled texts found among the photo's texts / labelled texts
    errors: list[PhotoErrors] = field(default_factory=list)  # photos with at least one error, in manifest order
    unmatched_texts: list[str] = field(default_factory=list)  # texts read on predictions that match no label
    blanked_right: int = 0  # labelled texts missed only because min_text_score blanked the plate that read them
    misreads: Misreads = field(default_factory=Misreads)  # where reading fails: by part, and the confusions
    iou_threshold: float = IOU_THRESHOLD
    small_width: float = SMALL_WIDTH


def evaluate(
    photos: Sequence[LabelledPhoto],
    predictions_by_photo: Sequence[Sequence[Prediction]],
    iou_threshold: float = IOU_THRESHOLD,
    small_width: float = SMALL_WIDTH,
) -> Report:
    """Score the predictions (`predictions_by_photo[i]` are those of `photos[i]`) against the labels."""
    if len(photos) != len(predictions_by_photo):
        raise ValueError(f"{len(photos)} photos but {len(predictions_by_photo)} prediction lists")
    report = Report(photos=len(photos), iou_threshold=iou_threshold, small_width=small_width)
    for photo, predictions in zip(photos, predictions_by_photo):
        errors = PhotoErrors(photo.label)
        matches = match([p.box for p in photo.plates], [p.box for p in predictions], iou_threshold)
        by_label = {i: j for i, j, _ in matches}
        matched_predictions = set(by_label.values())
        for i, plate in enumerate(photo.plates):
            found = i in by_label
            report.detection_recall.add(found)
            if plate.box[2] - plate.box[0] < small_width:
                report.small_recall.add(found)
            if not found:
                errors.missed.append({"box": _box(plate.box), "text": plate.text})
            elif plate.text is not None:
                prediction = predictions[by_label[i]]
                report.recognition.add(prediction.text == plate.text)
                report.misreads.add(plate.text, prediction.text)
                if prediction.text != plate.text:
                    errors.misread.append(
                        {
                            "box": _box(plate.box),
                            "predicted_box": _box(prediction.box),
                            "expected": plate.text,
                            "got": prediction.text,
                        }
                    )
        for j, prediction in enumerate(predictions):
            report.detection_precision.add(j in matched_predictions)
            if j not in matched_predictions:
                errors.false_positives.append(
                    {"box": _box(prediction.box), "text": prediction.text, "score": float(prediction.score)}
                )
                if prediction.text is not None:
                    report.unmatched_texts.append(prediction.text)
        returned = [p.text for p in predictions if p.text is not None]
        if photo.text is not None and returned:
            report.misreads.add(photo.text, photo.text if photo.text in returned else nearest(photo.text, returned))
        available = Counter(returned)
        blanked = Counter(p.candidates[0][0] for p in predictions if p.text is None and p.candidates)
        for text in photo.texts:
            found = available[text] > 0
            available[text] -= int(found)
            report.end_to_end.add(found)
            if not found:
                errors.texts_not_found.append({"expected": text, "returned": returned})
                if blanked[text] > 0:
                    blanked[text] -= 1
                    report.blanked_right += 1
        if errors:
            report.errors.append(errors)
    return report


def _box(box: Sequence[float]) -> list[float]:
    return [round(float(v), 1) for v in box]


def with_min_text_score(predictions: Sequence[Prediction], threshold: float) -> list[Prediction]:
    """The predictions as the server would return them with min_text_score = `threshold`: each plate's top
    candidate as its text where it scores at least `threshold`, no text otherwise."""
    decided = []
    for prediction in predictions:
        text, score = prediction.candidates[0] if prediction.candidates else (None, 0.0)
        kept = text is not None and score >= threshold
        decided.append(dataclasses.replace(prediction, text=text if kept else None, text_score=score if kept else 0.0))
    return decided


def sweep(
    photos: Sequence[LabelledPhoto], predictions_by_photo: Sequence[Sequence[Prediction]], thresholds: Sequence[float]
) -> list[tuple[float, Report]]:
    """(min_text_score, report) for each of `thresholds`, from the same predictions (see `with_min_text_score`)."""
    return [
        (threshold, evaluate(photos, [with_min_text_score(p, threshold) for p in predictions_by_photo]))
        for threshold in thresholds
    ]
