"""The photos the detector's training scenes are drawn from (plates.training.scenes), their plates, and their split
into train and val; and the YOLO label rows of a scene's plates.

Photos: detect/images/train, less every photo `plates.training.real_plates.training_photos` leaves out (e2e.json's,
the val split's, and their copies), and rfplates/scenes (CC BY 4.0), less any copy of those held-out photos (by
look). Photos are grouped (one photo under several names, near copies by look, the same plate text read by eye in
several) and each group goes to train or val by a hash of its name: no val scene comes from a photo, a copy of one
or a car that a train scene comes from.

Classes: 0 a one-line plate, 1 a two-line plate (CLASS_NAMES). The box's shape does not tell them apart: of the
one-line plates read by eye in rfplates/scenes, 5 % have boxes less than twice as wide as tall and 12 % less than
2.5 times, where its two-line plates' are 1.2 to 1.6; the rows of characters do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from plates.evaluation.manifests import load_yolo_photo
from plates.evaluation.scoring import iou
from plates.training.by_eye import Label
from plates.training.real_plates import SAME_LOOK_BITS, held_out_looks, is_copy, look_hash, split_of, training_photos

Box = tuple[float, float, float, float]
ONE_LINE, TWO_LINE = 0, 1
CLASS_NAMES = {ONE_LINE: "plate", TWO_LINE: "two-line plate"}


@dataclass(frozen=True)
class ScenePlate:
    box: Box  # x1, y1, x2, y2 in the scene's pixels
    lines: int = 1
    text: str | None = None  # where known: rendered, or read by eye
    style: str | None = None  # the rendered plate's style (plates.training.synthetic); None: a real plate

    @property
    def cls(self) -> int:
        return TWO_LINE if self.lines == 2 else ONE_LINE


@dataclass(frozen=True)
class Photo:
    path: Path
    plates: tuple[ScenePlate, ...]
    look: np.ndarray = field(compare=False, repr=False)  # plates.training.real_plates.look_hash


def _with_labels(
    path: Path, boxes: Iterable[Sequence[float]], labels: Sequence[Label], data_dir: Path
) -> tuple[ScenePlate, ...]:
    """The photo's boxes as plates, with the lines and text read by eye where a label's box is the same box; a box
    read as no plate at all is left out."""
    try:
        name = str(path.resolve().relative_to(Path(data_dir).resolve()))
    except ValueError:
        name = None
    read = [label for label in labels if label.image == name and label.box is not None]
    plates = []
    for box in boxes:
        label = next((label for label in read if iou(label.box, box) > 0.9), None)
        if label is not None and label.status == "notplate":
            continue
        text = label.text if label is not None and label.status == "read" else None
        plates.append(ScenePlate(tuple(float(v) for v in box), label.lines if label else 1, text))
    return tuple(plates)


def load_photos(
    detect_dir: Path, rfplates_dir: Path, e2e_manifest: Path, labels: Sequence[Label], data_dir: Path, log=print
) -> list[Photo]:
    """Every photo scenes may be drawn from, with its plates: detect's training photos and rfplates' scenes, never a
    held-out photo or a copy of one."""
    looks = held_out_looks(detect_dir, e2e_manifest)
    photos = [
        Photo(path, _with_labels(path, boxes, labels, data_dir), look_hash(path))
        for path, boxes in training_photos(detect_dir, e2e_manifest)
    ]
    copies = 0
    rfplates_dir = Path(rfplates_dir)
    for image in sorted((rfplates_dir / "images").iterdir()):
        look = look_hash(image)
        if is_copy(look, looks):
            copies += 1
            continue
        boxes = [plate.box for plate in load_yolo_photo(rfplates_dir, image).plates]
        photos.append(Photo(image, _with_labels(image, boxes, labels, data_dir), look))
    log(f"photos: {len(photos)} ({copies} rfplates photos left out as copies of held-out ones)")
    return photos


def _family(path: Path) -> str:
    """One photo under several names: Roboflow's exports name it `<name>_<ext>.rf.<hash>.jpg`."""
    return path.name.split(".rf.")[0] if ".rf." in path.name else path.stem


def photo_groups(photos: Sequence[Photo]) -> list[str]:
    """Per photo, the name of its group: photos of one name before Roboflow's suffix, near copies by look, and
    photos holding a plate of the same text (read by eye) share one."""
    parent = list(range(len(photos)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[root(i)] = root(j)

    first: dict[str, int] = {}
    for index, photo in enumerate(photos):
        keys = [f"name:{_family(photo.path)}"] + [f"text:{p.text}" for p in photo.plates if p.text]
        for key in keys:
            join(index, first.setdefault(key, index))
    looks = np.packbits(np.stack([photo.look for photo in photos]), axis=1)
    for index in range(len(photos)):
        differing = np.unpackbits(looks[index + 1 :] ^ looks[index], axis=1).sum(1)
        for other in np.flatnonzero(differing <= SAME_LOOK_BITS):
            join(index, index + 1 + int(other))
    names: dict[int, str] = {}
    for index, photo in sorted(enumerate(photos), key=lambda item: item[1].path.name):
        names.setdefault(root(index), photo.path.name)
    return [names[root(index)] for index in range(len(photos))]


def split_photos(photos: Sequence[Photo], val_share: float) -> dict[str, list[Photo]]:
    """Photos in train and val, whole groups at a time, by a hash of the group's name (the same on every run). A
    group holding a plate of the recognizer's test split (plates.training.real_plates.split_of) goes to val whatever
    its hash: the photos that score the recognizer on plates it never saw are never the detector's to learn either."""
    groups = photo_groups(photos)
    tested = {
        group
        for photo, group in zip(photos, groups)
        if any(plate.text and split_of(plate.text) == "test" for plate in photo.plates)
    }
    splits: dict[str, list[Photo]] = {"train": [], "val": []}
    for photo, group in zip(photos, groups):
        splits["val" if group_bucket(group) < val_share or group in tested else "train"].append(photo)
    return splits


def group_bucket(group: str) -> float:
    """Where a photo group falls in [0, 1), by a hash of its name: under the val share, it is a val group."""
    return int.from_bytes(hashlib.sha256(group.encode()).digest()[:4], "big") / 2**32


def yolo_rows(plates: Iterable[ScenePlate], width: int, height: int) -> str:
    """Ultralytics' label file of `plates`: a row `class cx cy w h` each, normalised to the image's size."""
    rows = []
    for plate in plates:
        x1, y1, x2, y2 = plate.box
        if x2 - x1 < 1 or y2 - y1 < 1:
            continue
        rows.append(
            f"{plate.cls} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
            f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}"
        )
    return "".join(row + "\n" for row in rows)
