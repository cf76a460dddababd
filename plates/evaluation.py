"""Scoring the served pipeline against labelled photos: the logic of `plates eval`, testable without a server.

A manifest lists photos and their labelled plates. Three forms are read by `load_manifest`:

1. A JSON list: `[{"image": "<path relative to the manifest>", "plates": [{"box": [x1, y1, x2, y2],
   "text": "A123BC77"}]}]`; `text` is optional (absent or null: a box without a known text).
2. The form of shared/data/e2e.json: the same list, with the text at photo level (`"text": "H002EX71"`) meaning
   "one of the listed boxes (the main plate) reads this". Which box is not said, so:
   - a photo with exactly one box: the text is that box's text, and counts for recognition and end-to-end
     accuracy like a per-plate text;
   - a photo with several boxes: the text stays a photo-level label (`LabelledPhoto.text`) and counts only for
     end-to-end accuracy. Guessing the box from the predictions (the one whose prediction reads the text)
     would bias recognition accuracy upwards, so it is not done.
   A photo-level text equal to one of its plates' texts is the same label said twice and counted once; one
   that contradicts the text of a photo's only box is an error.
3. A YOLO-format folder, or its data.yaml, for detection-only figures: the images of one split
   (`images/<split>`, or the folder(s) data.yaml names for the split, relative to its `path`, itself relative to
   the yaml's folder), labels in the parallel `labels/` folder (`<stem>.txt`, rows `class cx cy w h`
   normalised to the image size). An empty or absent label file means a photo with no plate, as in
   Ultralytics. Every row is a plate whatever its class. Images are decoded as the client will send them to get
   the sizes that denormalise the boxes.

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
- where reading fails (plates.misreads): every labelled text compared with what was read of it, split into main
  field and region code, with the characters confused. A plate's text is compared with its matched prediction's; a
  photo-level text with the photo's returned text nearest to it, where the photo returned any (none returned may
  be a plate not found, which is detection's part).

A plate's top candidate is its text before the server's min_text_score, so `with_min_text_score` re-decides the
texts for another threshold without asking the server again; `sweep` scores several.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from plates.exceptions import InvalidInputError
from plates.misreads import Misreads, nearest
from plates.photos import image_files, read_image

IOU_THRESHOLD = 0.5
SMALL_WIDTH = 40.0  # pixels: a labelled plate narrower than this is "small"

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class LabelledPlate:
    box: Box  # x1, y1, x2, y2 in the photo's pixels
    text: str | None = None


@dataclass(frozen=True)
class LabelledPhoto:
    image: Path
    plates: list[LabelledPlate]
    text: str | None = None  # a photo-level text not attributed to any one box: counts for end-to-end only
    name: str = ""  # how reports call the photo (the path as the manifest wrote it); str(image) if empty

    @property
    def label(self) -> str:
        return self.name or str(self.image)

    @property
    def texts(self) -> list[str]:
        """Every labelled text of the photo, for end-to-end accuracy."""
        texts = [plate.text for plate in self.plates if plate.text is not None]
        return texts + [self.text] if self.text is not None else texts


class Prediction(Protocol):
    """What `PlatesClient.recognize` returns (`plates.client.Plate`)."""

    text: str | None
    box: Sequence[float]
    score: float
    text_score: float
    candidates: Sequence[tuple[str, float]]  # (text, probability), best first, also where text is None


# --------------------------------------------------------------------------------------------------- manifests


def load_manifest(path: str | Path, split: str = "val") -> list[LabelledPhoto]:
    """Read a JSON manifest, a YOLO data.yaml or a YOLO folder; InvalidInputError naming the entry and field."""
    path = Path(path)
    if path.is_dir():
        return load_yolo(path, split)
    if not path.is_file():
        raise InvalidInputError(f"manifest {path}: no such file or folder")
    if path.suffix.lower() in (".yaml", ".yml"):
        return load_yolo(path, split)
    return load_json_manifest(path)


def load_json_manifest(path: str | Path) -> list[LabelledPhoto]:
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidInputError(f"manifest {path}: cannot read: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise InvalidInputError(f"manifest {path}: not UTF-8 text: {error}") from error
    except json.JSONDecodeError as error:
        raise InvalidInputError(
            f"manifest {path}: not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from error
    return parse_entries(entries, path.parent, source=str(path))


def parse_entries(entries: Any, root: Path, source: str = "manifest") -> list[LabelledPhoto]:
    """The JSON manifest's decoded list as LabelledPhotos; image paths are relative to `root`."""
    if not isinstance(entries, list):
        raise InvalidInputError(f"{source}: must be a JSON list of photos, got {_json_type(entries)}")
    photos: list[LabelledPhoto] = []
    seen: dict[Path, int] = {}
    for index, entry in enumerate(entries):
        photo = _parse_entry(index, entry, root)
        key = photo.image.resolve()
        if key in seen:
            raise InvalidInputError(f"manifest entry {index} ({photo.name}): image already listed as entry {seen[key]}")
        seen[key] = index
        photos.append(photo)
    return photos


def _parse_entry(index: int, entry: Any, root: Path) -> LabelledPhoto:
    if not isinstance(entry, dict):
        raise InvalidInputError(f"manifest entry {index}: must be an object, got {_json_type(entry)}")
    image = entry.get("image")
    if not isinstance(image, str) or not image.strip():
        raise InvalidInputError(f'manifest entry {index}: field "image" must be a non-empty path, got {_show(image)}')
    where = f"manifest entry {index} ({image})"
    _reject_unknown(entry, ("image", "plates", "text"), where)
    if "plates" not in entry:
        raise InvalidInputError(f'{where}: field "plates" is missing (a photo without plates has "plates": [])')
    if not isinstance(entry["plates"], list):
        raise InvalidInputError(f'{where}: field "plates" must be a list, got {_show(entry["plates"])}')
    plates = [_parse_plate(plate, f"{where}, plate {number}") for number, plate in enumerate(entry["plates"])]
    text = _parse_text(entry.get("text"), where)
    if text is not None:
        if text in [plate.text for plate in plates]:
            text = None  # said twice: counted once, on its box
        elif len(plates) == 1:
            if plates[0].text is not None:
                raise InvalidInputError(
                    f'{where}: field "text" ({text!r}) contradicts the text of its only plate ({plates[0].text!r})'
                )
            plates, text = [LabelledPlate(plates[0].box, text)], None
    path = root / image
    if not path.is_file():
        raise InvalidInputError(f'{where}: field "image": no such file {path}')
    return LabelledPhoto(path, plates, text, name=image)


def _parse_plate(plate: Any, where: str) -> LabelledPlate:
    if not isinstance(plate, dict):
        raise InvalidInputError(f"{where}: must be an object, got {_show(plate)}")
    _reject_unknown(plate, ("box", "text"), where)
    if "box" not in plate:
        raise InvalidInputError(f'{where}: field "box" is missing')
    box = plate["box"]
    if not (isinstance(box, list) and len(box) == 4 and all(_is_number(v) for v in box)):
        raise InvalidInputError(f'{where}: field "box" must be 4 numbers, got {_show(box)}')
    x1, y1, x2, y2 = (float(v) for v in box)
    if not (x2 > x1 and y2 > y1):
        raise InvalidInputError(
            f'{where}: field "box" must be [x1, y1, x2, y2] with x2 > x1 and y2 > y1, got {_show(box)}'
        )
    return LabelledPlate((x1, y1, x2, y2), _parse_text(plate.get("text"), where))


def _parse_text(text: Any, where: str) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(f'{where}: field "text" must be a non-empty string or null, got {_show(text)}')
    return text


def _reject_unknown(obj: dict, known: tuple[str, ...], where: str) -> None:
    unknown = [key for key in obj if key not in known]
    if unknown:
        raise InvalidInputError(f'{where}: unknown field "{unknown[0]}" (known: {", ".join(known)})')


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _show(value: Any) -> str:
    finite = not isinstance(value, float) or math.isfinite(value)
    shown = json.dumps(value, ensure_ascii=False) if finite else str(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


# ------------------------------------------------------------------------------------------------------- YOLO


def load_yolo(path: str | Path, split: str = "val") -> list[LabelledPhoto]:
    """The photos of one split of a YOLO dataset (its folder or its data.yaml), boxes in pixels."""
    path = Path(path)
    if path.is_dir():
        yaml_path = next((path / n for n in ("data.yaml", "data.yml") if (path / n).is_file()), None)
        if yaml_path is None:
            return _load_yolo_images(path, [path / "images" / split], split)
        path = yaml_path
    root, folders = _read_data_yaml(path, split)
    return _load_yolo_images(root, folders, split)


def _read_data_yaml(path: Path, split: str) -> tuple[Path, list[Path]]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidInputError(f"{path}: cannot read: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise InvalidInputError(f"{path}: not YAML: {error}") from error
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path}: must be a YAML mapping with `path` and split keys, got {_json_type(data)}")
    base = data.get("path") or "."
    if not isinstance(base, str):
        raise InvalidInputError(f'{path}: field "path" must be a folder, got {_show(base)}')
    root = path.parent / base  # an absolute `path` stays as it is
    if split not in data:
        splits = [key for key in ("train", "val", "test") if key in data]
        raise InvalidInputError(f'{path}: no split "{split}" (it has: {", ".join(splits) or "none"})')
    entries = data[split] if isinstance(data[split], list) else [data[split]]
    if not entries or not all(isinstance(entry, str) and entry for entry in entries):
        raise InvalidInputError(
            f'{path}: field "{split}" must be a folder or a list of folders, got {_show(data[split])}'
        )
    return root, [root / entry for entry in entries]


def _load_yolo_images(root: Path, folders: list[Path], split: str) -> list[LabelledPhoto]:
    photos: list[LabelledPhoto] = []
    for folder in folders:
        if not folder.is_dir():
            raise InvalidInputError(f'YOLO split "{split}": no image folder {folder}')
        for image in image_files(folder):
            photos.append(load_yolo_photo(root, image))
    if not photos:
        raise InvalidInputError(f'YOLO split "{split}": no images in {", ".join(str(f) for f in folders)}')
    return photos


def yolo_label_path(image: Path) -> Path:
    """Ultralytics' rule: the last `images` folder of the path becomes `labels`, the suffix `.txt`."""
    parts = list(image.parts)
    if "images" not in parts[:-1]:
        raise InvalidInputError(f"{image}: a YOLO image must lie under an `images` folder to find its labels")
    last = len(parts) - 2 - parts[-2::-1].index("images")
    parts[last] = "labels"
    return Path(*parts).with_suffix(".txt")


def load_yolo_photo(root: Path, image: Path) -> LabelledPhoto:
    """One YOLO image and its plates (its label file's rows, every class a plate), boxes in pixels, named relative
    to `root`."""
    name = _relative(image, root)
    labels = yolo_label_path(image)
    rows = labels.read_text(encoding="utf-8").splitlines() if labels.is_file() else []
    rows = [(number, row.split()) for number, row in enumerate(rows, start=1) if row.strip()]
    if not rows:
        return LabelledPhoto(image, [], name=name)
    try:
        height, width = read_image(image).shape[:2]
    except InvalidInputError as error:
        raise InvalidInputError(f"YOLO image {name}: {error}") from error
    plates = []
    for number, values in rows:
        where = f"{_relative(labels, root)} line {number} (image {name})"
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            numbers = []
        if len(numbers) != 5 or not all(math.isfinite(v) for v in numbers):
            raise InvalidInputError(f'{where}: a row must be 5 numbers "class cx cy w h", got {" ".join(values)!r}')
        cls, cx, cy, w, h = numbers
        if cls < 0 or cls != int(cls):
            raise InvalidInputError(f"{where}: class must be a non-negative integer, got {values[0]!r}")
        if not (w > 0 and h > 0 and all(-0.01 <= v <= 1.01 for v in (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))):
            raise InvalidInputError(f"{where}: box {' '.join(values[1:])} must be normalised to 0..1 with w, h > 0")
        box = ((cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height)
        plates.append(LabelledPlate(tuple(round(v, 2) for v in box)))  # type: ignore[arg-type]
    return LabelledPhoto(image, plates, name=name)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


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


# ----------------------------------------------------------------------------------------------------- output


def _value(ratio: Ratio) -> str:
    return "n/a" if ratio.value is None else f"{ratio.value:.3f}"


def format_summary(report: Report) -> str:
    """One line: `detection R 0.912 P 0.934 (n=120) | small<40px R 0.700 (n=30) | recognition ... | 75 photos`."""
    small = f"{report.small_width:g}"
    return (
        f"detection R {_value(report.detection_recall)} P {_value(report.detection_precision)} "
        f"(n={report.detection_recall.total}) | small<{small}px R {_value(report.small_recall)} "
        f"(n={report.small_recall.total}) | recognition {_value(report.recognition)} (n={report.recognition.total}) | "
        f"end-to-end {_value(report.end_to_end)} (n={report.end_to_end.total}) | {report.photos} photos"
    )


def _show_box(box: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:.0f}" for v in box) + ")"


def format_report(report: Report) -> str:
    """The errors photo by photo, the metrics with their fractions, and the one-line summary as the last line."""
    lines = []
    if report.errors:
        lines.append(f"errors in {len(report.errors)} of {report.photos} photos:")
    else:
        lines.append(f"no errors in {report.photos} photos")
    for errors in report.errors:
        lines.append(errors.image)
        for miss in errors.missed:
            text = f" text={miss['text']}" if miss["text"] is not None else ""
            lines.append(f"  missed          box={_show_box(miss['box'])}{text}")
        for fp in errors.false_positives:
            lines.append(
                f"  false positive  box={_show_box(fp['box'])} text={fp['text'] or '(unread)'} score={fp['score']:.2f}"
            )
        for misread in errors.misread:
            lines.append(
                f"  misread         box={_show_box(misread['box'])} expected {misread['expected']} "
                f"got {misread['got'] or '(unread)'}"
            )
        # An end-to-end miss already shown as a missed or misread box of the same text is not repeated.
        shown = Counter(m["text"] for m in errors.missed if m["text"] is not None)
        shown.update(m["expected"] for m in errors.misread)
        for miss in errors.texts_not_found:
            if shown[miss["expected"]] > 0:
                shown[miss["expected"]] -= 1
                continue
            returned = ", ".join(miss["returned"]) or "no text"
            lines.append(f"  not found       {miss['expected']} (returned: {returned})")
    r = report
    lines += [
        "",
        f"detection     recall {_value(r.detection_recall)} ({r.detection_recall.hits}/{r.detection_recall.total})"
        f"  precision {_value(r.detection_precision)} ({r.detection_precision.hits}/{r.detection_precision.total})"
        f"  at IoU >= {r.iou_threshold:g}",
        f"small <{r.small_width:g}px  recall {_value(r.small_recall)} ({r.small_recall.hits}/{r.small_recall.total})",
        f"recognition   {_value(r.recognition)} ({r.recognition.hits}/{r.recognition.total})"
        "  exact texts of the detected labelled plates that carry one",
        f"end-to-end    {_value(r.end_to_end)} ({r.end_to_end.hits}/{r.end_to_end.total})"
        "  labelled texts found among their photo's texts",
        f"texts on unmatched boxes  {len(r.unmatched_texts)}  {', '.join(r.unmatched_texts)}".rstrip(),
        f"right readings blanked    {r.blanked_right}  by the server's min_text_score",
        *r.misreads.format(),
        format_summary(report),
    ]
    return "\n".join(lines)


def format_sweep(sweep: Sequence[tuple[float, Report]]) -> str:
    """A table: per min_text_score, recognition and end-to-end accuracy, texts on unmatched boxes, right
    readings blanked."""
    lines = [
        "min_text_score  recognition       end-to-end        texts on unmatched boxes  right readings blanked",
    ]
    for threshold, r in sweep:
        recognition = f"{_value(r.recognition)} ({r.recognition.hits}/{r.recognition.total})"
        end_to_end = f"{_value(r.end_to_end)} ({r.end_to_end.hits}/{r.end_to_end.total})"
        lines.append(
            f"{threshold:<14g}  {recognition:<16}  {end_to_end:<16}  {len(r.unmatched_texts):<24}  {r.blanked_right}"
        )
    return "\n".join(lines)


def report_to_dict(report: Report) -> dict:
    return {
        "photos": report.photos,
        "iou_threshold": report.iou_threshold,
        "small_width": report.small_width,
        "metrics": {
            "detection_recall": report.detection_recall.to_dict(),
            "detection_precision": report.detection_precision.to_dict(),
            "small_recall": report.small_recall.to_dict(),
            "recognition_accuracy": report.recognition.to_dict(),
            "end_to_end_accuracy": report.end_to_end.to_dict(),
        },
        "errors": [errors.to_dict() for errors in report.errors],
        "unmatched_texts": report.unmatched_texts,
        "blanked_right": report.blanked_right,
        "where_reading_fails": report.misreads.to_dict(),
        "summary": format_summary(report),
    }


def report_to_json(report: Report, sweep: Sequence[tuple[float, Report]] = ()) -> str:
    """The whole report as one JSON document, with the reports of a min_text_score `sweep` if given."""
    document = report_to_dict(report)
    if sweep:
        document["min_text_score_sweep"] = [
            {
                "min_text_score": threshold,
                "recognition_accuracy": r.recognition.to_dict(),
                "end_to_end_accuracy": r.end_to_end.to_dict(),
                "unmatched_texts": r.unmatched_texts,
                "blanked_right": r.blanked_right,
            }
            for threshold, r in sweep
        ]
    return json.dumps(document, ensure_ascii=False, indent=2)
