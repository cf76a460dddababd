"""Labelled photos for `plates eval`: the manifests it reads, as LabelledPhoto lists.

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
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plates.exceptions import InvalidInputError
from plates.photos.files import image_files, read_image

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
