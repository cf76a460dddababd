"""The real plates the recognizer learns from: plates read by eye (labels/*.json, convert/read_by_eye.py) in photos
the project may train on, each given to one split by its text, so that a car seen in several photos, or in a scene
and in a crop, never sits on both sides of a split.

e2e.json's photos and detect/images/val are how the project knows its accuracy: `training_photos` leaves them out
of the photos that are read, and `check_trainable` refuses any label of theirs. The detect set holds 30 train photos
that are copies of val or e2e.json photos under other names (ds_011.jpg is volga_russian cars_23.jpg): copies are
found by their look (`look_hash`) and left out alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from plates.evaluation.manifests import load_yolo
from plates.training.by_eye import Label

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class RealPlate:
    image: str  # path of the photo, or of a tight crop of the plate
    box: tuple[float, float, float, float] | None  # x1, y1, x2, y2 in its pixels; None: the image is the plate
    text: str  # as read by eye (plates/training/by_eye.py)
    lines: int = 1  # 2: a two-line plate, its text the top row then the bottom one


def split_of(text: str) -> str:
    """The split of every plate that reads `text`: one text in ten is held out for testing, one in ten for
    validation, by a hash of the text (the same on every machine and run)."""
    bucket = hashlib.sha256(text.encode()).digest()[0] % 10
    return "test" if bucket == 0 else "val" if bucket == 1 else "train"


def held_out_photos(detect_dir: Path, e2e_manifest: Path) -> set[str]:
    """Names of the photos never trained on: every photo e2e.json lists, and the whole val split."""
    listed = {Path(entry["image"]).name for entry in json.loads(Path(e2e_manifest).read_text())}
    return listed | {path.name for path in (Path(detect_dir) / "images" / "val").glob("*")}


# Two photos whose look hashes differ in at most this many of their 256 bits are one photo: the detect set's copies
# differ in none, and no other pair of its or rfplates' photos in fewer than 31.
SAME_LOOK_BITS = 8


def look_hash(path: Path) -> np.ndarray:
    """A difference hash of the photo's look (256 bits): whether each pixel of a 17x16 grey thumbnail is brighter
    than its left neighbour. The same for a photo re-encoded, renamed or resized."""
    grey = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    small = cv2.resize(grey, (17, 16), interpolation=cv2.INTER_AREA)
    return (small[:, 1:] > small[:, :-1]).flatten()


def held_out_looks(detect_dir: Path, e2e_manifest: Path) -> np.ndarray:
    """The look hashes of every held-out photo, [photos, 256]."""
    manifest_root = Path(e2e_manifest).parent
    paths = {manifest_root / entry["image"] for entry in json.loads(Path(e2e_manifest).read_text())}
    paths |= set((Path(detect_dir) / "images" / "val").glob("*"))
    return np.stack([look_hash(path) for path in sorted(paths)])


def is_held_out_copy(path: Path, looks: np.ndarray) -> bool:
    return is_copy(look_hash(path), looks)


def is_copy(look: np.ndarray, looks: np.ndarray) -> bool:
    """Whether the photo of look hash `look` is one of the photos of `looks` ([photos, 256])."""
    return bool(((looks != look).sum(1) <= SAME_LOOK_BITS).any())


def training_photos(detect_dir: Path, e2e_manifest: Path) -> Iterator[tuple[Path, list[tuple[float, ...]]]]:
    """(photo, its plate boxes in pixels) of the train split with a plate, less the held-out photos and their
    copies."""
    held_out = held_out_photos(detect_dir, e2e_manifest)
    looks = held_out_looks(detect_dir, e2e_manifest)
    for photo in load_yolo(detect_dir, split="train"):
        if photo.image.name not in held_out and photo.plates and not is_held_out_copy(photo.image, looks):
            yield photo.image, [tuple(plate.box) for plate in photo.plates]


def check_trainable(labels: Iterable[Label], data_dir: Path, held_out: set[str], looks: np.ndarray) -> None:
    """ValueError naming the first label whose photo is held out (by name), lies in a val split, or is a copy of a
    held-out photo."""
    for image in dict.fromkeys(label.image for label in labels):
        path = Path(image)
        if path.name in held_out or "val" in path.parts or is_held_out_copy(Path(data_dir) / path, looks):
            raise ValueError(f"label of {image}: a photo the project measures itself on is never trained on")


def real_plates(labels: Iterable[Label], data_dir: Path, lines: tuple[int, ...] = (1, 2)) -> list[RealPlate]:
    """The labels read with every character certain (and of a plate with `lines` rows), as plates to learn from."""
    return [
        RealPlate(str(Path(data_dir) / label.image), label.box, label.text, label.lines)
        for label in labels
        if label.trainable and label.lines in lines
    ]
