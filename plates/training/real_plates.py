"""The real plates the recognizer may learn from: the train split of the detector's photos (YOLO boxes, no text),
less every photo that e2e.json lists, with texts read by the pretrained recognizer where it is sure of them.

e2e.json's photos and detect/images/val are how the project knows its accuracy: `training_photos` refuses them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np
import torch

from plates.evaluation import load_yolo
from plates.recognition.crops import DEFAULT_VARIANTS, prepare_crops
from plates.recognition.ctc import read_plates, vote


@dataclass(frozen=True)
class RealPlate:
    image: str  # path of the photo
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in its pixels
    text: str  # "" where the pseudo-labeller found no plate text
    confidence: float  # the pseudo-labeller's probability of `text`


def held_out_photos(detect_dir: Path, e2e_manifest: Path) -> set[str]:
    """Names of the photos never trained on: every photo e2e.json lists, and the whole val split."""
    listed = {Path(entry["image"]).name for entry in json.loads(Path(e2e_manifest).read_text())}
    return listed | {path.name for path in (Path(detect_dir) / "images" / "val").glob("*")}


def training_photos(detect_dir: Path, e2e_manifest: Path) -> Iterator[tuple[Path, list[tuple[float, ...]]]]:
    """(photo, its plate boxes in pixels) of the train split with a plate, less the held-out photos."""
    held_out = held_out_photos(detect_dir, e2e_manifest)
    for photo in load_yolo(detect_dir, split="train"):
        if photo.image.name not in held_out and photo.plates:
            yield photo.image, [tuple(plate.box) for plate in photo.plates]


class PseudoLabeller:
    """Reads a plate as the served pipeline does with every cut (the 15 variants and the constrained vote), with
    eager STN and LPRNet networks."""

    def __init__(self, stn: torch.nn.Module, lprnet: torch.nn.Module) -> None:
        self.stn, self.lprnet = stn.eval(), lprnet.eval()

    def read(self, image: np.ndarray, box: tuple[float, ...]) -> tuple[str, float]:
        crops = torch.from_numpy(prepare_crops(image, np.array([box], np.float32), DEFAULT_VARIANTS))
        with torch.inference_mode():
            logits = self.lprnet(self.stn(crops)).numpy()
        (reading,) = vote(read_plates(logits), len(DEFAULT_VARIANTS))
        return reading.text, reading.confidence


def label_plates(detect_dir: Path, e2e_manifest: Path, labeller: PseudoLabeller) -> list[RealPlate]:
    plates = []
    for photo, boxes in training_photos(detect_dir, e2e_manifest):
        image = cv2.imread(str(photo))
        for box in boxes:
            text, confidence = labeller.read(image, box)
            plates.append(RealPlate(str(photo), tuple(round(v, 2) for v in box), text, round(confidence, 4)))
    return plates


def save_plates(plates: list[RealPlate], path: Path) -> None:
    Path(path).write_text(json.dumps([asdict(p) for p in plates], indent=0))


def load_plates(path: Path) -> list[RealPlate]:
    return [RealPlate(p["image"], tuple(p["box"]), p["text"], p["confidence"]) for p in json.loads(Path(path).read_text())]
