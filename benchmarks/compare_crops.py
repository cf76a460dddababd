"""Crops cut from each plate's neighbourhood against crops cut from the whole rescaled photo (figures, not assertions)

Both ways in one process, with the served detector, STN and LPRNet (model_repository) and DEFAULT_VARIANTS:

- Pixels: the largest difference between a cut made both ways (uint8 levels, before normalisation), over every
  detected box of car.jpg, the photos of e2e.json and the val photos, and every box e2e.json and the val labels give.
- Readings: how many plates read the same voted text both ways; how many e2e.json photos have their text among
  their plates' readings (detected boxes, then e2e.json's), each way; what car.jpg's plates read.
- Speed: prepare_crops on car.jpg (its detected boxes) and the first 1600x1200 and 1920x1080 val photos (their
  labelled boxes), both ways taking turns; the median of --repeats calls, and the ratio.

    poetry run python benchmarks/compare_crops.py [--repeats 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch

from plates.detection import PlateDetector
from plates.evaluation import load_yolo
from plates.export import DEFAULT_REPOSITORY
from plates.photos import read_image
from plates.recognition.crops import (
    CROP_HEIGHT,
    CROP_WIDTH,
    DEFAULT_VARIANTS,
    REFERENCE_FRAME,
    cut_crops,
    normalize,
    prepare_crops,
    whole_frame_cuts,
)
from plates.recognition.ctc import read_plates, vote
from plates.weights import PROJECT_ROOT

SHARED = PROJECT_ROOT.parent / "shared" / "data"


def whole_frame_crops(image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    cuts = whole_frame_cuts(image, boxes)
    return np.stack([normalize(cut) for cut in cuts]) if cuts else np.zeros((0, 3, CROP_HEIGHT, CROP_WIDTH), np.float32)


def neighbourhood_crops(image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    return prepare_crops(image, boxes, DEFAULT_VARIANTS)


def largest_difference(image: np.ndarray, boxes: np.ndarray) -> float:
    """uint8 levels; infinite where a cut's size differs."""
    pairs = zip(cut_crops(image, boxes, DEFAULT_VARIANTS), whole_frame_cuts(image, boxes))
    return max(
        (np.abs(new.astype(int) - old).max() if new.shape == old.shape else np.inf for new, old in pairs), default=0
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=50, help="prepare_crops calls timed per photo and way")
    args = parser.parse_args()

    detector = PlateDetector(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx")
    stn, lprnet = (
        torch.jit.load(str(DEFAULT_REPOSITORY / name / "1" / "model.pt")).eval() for name in ("stn", "lprnet")
    )

    def texts(crops: np.ndarray) -> list[str]:
        if len(crops) == 0:
            return []
        with torch.inference_mode():
            logits = lprnet(stn(torch.from_numpy(crops)))
        return [reading.text for reading in vote(read_plates(logits.numpy()), len(DEFAULT_VARIANTS))]

    e2e = json.loads((SHARED / "e2e.json").read_text())
    val = load_yolo(SHARED / "detect", "val")
    car = SHARED / "samples" / "car.jpg"
    sources = {
        "e2e.json's": {SHARED / item["image"]: [plate["box"] for plate in item["plates"]] for item in e2e},
        "val labels'": {photo.image: [plate.box for plate in photo.plates] for photo in val},
    }
    images = {path: read_image(path) for path in [car, *sources["e2e.json's"], *sources["val labels'"]]}
    sources["detected"] = {path: detector.detect(image).boxes for path, image in images.items()}

    worst, plates, same = 0.0, 0, 0
    readings = {}  # (photo, whose boxes) -> (texts cut from the neighbourhoods, from the whole frame)
    cases = [(path, source, boxes) for source, photos in sources.items() for path, boxes in photos.items()]
    for path, source, boxes in cases:
        image, boxes = images[path], np.asarray(boxes, np.float32).reshape(-1, 4)
        worst = max(worst, largest_difference(image, boxes))
        new, old = texts(neighbourhood_crops(image, boxes)), texts(whole_frame_crops(image, boxes))
        readings[path, source] = new, old
        plates += len(new)
        same += sum(a == b for a, b in zip(new, old))
    print(f"photos: {len(images)} (car.jpg, {len(e2e)} of e2e.json, {len(val)} val), cases: {len(cases)}")
    print(f"largest difference between cuts: {worst} uint8 levels")
    print(f"plates whose voted text is the same both ways: {same} of {plates}")
    for source in ("detected", "e2e.json's"):
        new, old = (
            sum(item["text"] in readings[SHARED / item["image"], source][way] for item in e2e) for way in (0, 1)
        )
        print(f"e2e.json photos read right, {source} boxes: neighbourhood {new}, whole frame {old} of {len(e2e)}")
    new, old = readings[car, "detected"]
    print(f"car.jpg's plates: neighbourhood {new}, whole frame {old}")

    timed = [(car, sources["detected"][car])] + [
        next((path, boxes) for path, boxes in sources["val labels'"].items() if images[path].shape[1::-1] == size)
        for size in ((1600, 1200), REFERENCE_FRAME)
    ]
    print(f"prepare_crops, median of {args.repeats} (ms), car.jpg's detected boxes, val photos' labelled ones:")
    for path, boxes in timed:
        image, boxes = images[path], np.asarray(boxes, np.float32)
        times = {neighbourhood_crops: [], whole_frame_crops: []}
        for _ in range(args.repeats):
            for prepare, spent in times.items():
                start = time.perf_counter()
                prepare(image, boxes)
                spent.append(time.perf_counter() - start)
        new, old = (statistics.median(spent) * 1000 for spent in times.values())
        height, width = image.shape[:2]
        print(
            f"  {path.name} ({width}x{height}, boxes: {len(boxes)}): whole frame {old:.2f}, neighbourhood {new:.2f},"
            f" {old / new:.1f}x faster"
        )


if __name__ == "__main__":
    main()
