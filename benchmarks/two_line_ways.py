"""Which ways to read a one-class detector's box as a two-line plate (yolo's two_line_aspect, plate_recognition's
other_ways_below; plates.recognition.layouts): measured on training scenes, so that the held-out sets stay honest.
Figures, not assertions.

    poetry run python benchmarks/two_line_ways.py [--scenes runs/scenes] [--two-line 150] [--one-line 200]

From the train split of a scene set (convert/make_scenes.py): `--two-line` pasted scenes holding a two-line plate at
least SMALL_WIDTH px wide, and `--one-line` real photos with plates read by eye, drawn with a fixed seed. The served
detector (model_repository's yolo config) finds their plates; each box that matches a labelled plate (IoU >= 0.5)
of the kind asked for is read as one row by stn and lprnet, and as two rows by lprnet_rows from the box as it is,
grown upward and grown downward to TWO_LINE_SHAPE, every way cut as served. Then each rule picks the likeliest of
the ways it allows, and the table says how many plates it reads right, and for how many one-line plates it reads
rows at all (what it costs: about 3 ms a row on 2 cores).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.evaluation import SMALL_WIDTH, iou
from plates.export import DEFAULT_REPOSITORY
from plates.recognition.crops import prepare_crops
from plates.recognition.ctc import Reading, vote
from plates.recognition.layouts import grown
from plates.recognition.rows import join_rows, read_joined, split_rows
from plates.serving.detector_model import DetectorModel
from plates.serving.model_config import read_config

TWO_LINE_CLASS = 1
# name: (the two-row ways it reads, the aspect under which it reads them, the one-row reading it must fall below)
RULES = {
    "box as it is, under 2.5": (("as_is",), 2.5, 1.01),
    "grown upward, under 2.5": (("up",), 2.5, 1.01),
    "grown upward or downward, under 3": (("up", "down"), 3.0, 1.01),
    "the same, where one row reads under 0.3 (served)": (("up", "down"), 3.0, 0.3),
    "the same, under 3.5": (("up", "down"), 3.5, 0.3),
    "the same, under 4": (("up", "down"), 4.0, 0.3),
}


class Reader:
    def __init__(self, repository: Path) -> None:
        yolo = repository / "yolo"
        self.detector = DetectorModel(read_config(yolo / "config.pbtxt"), yolo / "1", torch.device("cpu"))
        load = lambda name: torch.jit.load(str(repository / name / "1" / "model.pt")).eval()  # noqa: E731
        self.one_line = torch.nn.Sequential(load("stn"), load("lprnet"))
        self.rows = load("lprnet_rows")

    def read(self, image: np.ndarray, box: list[float], rows: int) -> Reading:
        crops = prepare_crops(image, np.array([box], np.float32), self.detector.crop_variants, [rows], "rows")
        lines = np.full(len(crops), rows)
        with torch.inference_mode():
            pieces = split_rows(torch.from_numpy(crops), lines)
            logits, frames = join_rows((self.rows if rows == 2 else self.one_line)(pieces), lines)
        return vote(read_joined(logits.numpy(), frames.numpy()), len(crops))[0]


def plates_found(reader: Reader, scenes: Path, records: list[dict], two_line: bool) -> list[dict]:
    found = []
    for record in records:
        image = cv2.imread(str(scenes / record["image"]))
        height = image.shape[0]
        for box in reader.detector.detector.detect(image).boxes.tolist():
            plate = max(record["plates"], key=lambda p: iou(box, p["box"]), default=None)
            if plate is None or iou(box, plate["box"]) < 0.5 or not plate.get("text"):
                continue
            if (plate["class"] == TWO_LINE_CLASS) != two_line:
                continue
            ways = {"one": reader.read(image, box, 1), "as_is": reader.read(image, box, 2)}
            ways.update({way: reader.read(image, list(grown(box, way == "up", height)), 2) for way in ("up", "down")})
            found.append({"text": plate["text"], "aspect": (box[2] - box[0]) / (box[3] - box[1]), "ways": ways})
    return found


def read_by(rule: tuple, plate: dict) -> tuple[str, bool]:
    """The text the rule reads the plate as, and whether it read rows at all."""
    two_row_ways, aspect, below = rule
    best = plate["ways"]["one"]
    if plate["aspect"] >= aspect or best.confidence >= below:
        return best.text, False
    for way in two_row_ways:
        if plate["ways"][way].confidence > best.confidence:
            best = plate["ways"][way]
    return best.text, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=Path, default=Path("runs/scenes"))
    parser.add_argument("--two-line", type=int, default=150, help="pasted train scenes with a two-line plate")
    parser.add_argument("--one-line", type=int, default=200, help="real train photos with plates read by eye")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    records = json.loads((args.scenes / "scenes.json").read_text())
    records = [r for r in records if r["image"].startswith("images/train")]
    pasted = [r for r in records if r["kind"] == "pasted" and any(
        p["class"] == TWO_LINE_CLASS and p["box"][2] - p["box"][0] >= SMALL_WIDTH for p in r["plates"])]
    photos = [r for r in records if r["kind"] == "photo" and any(p.get("text") for p in r["plates"])]
    rng = np.random.default_rng(args.seed)
    reader = Reader(DEFAULT_REPOSITORY)
    two = plates_found(reader, args.scenes, [pasted[i] for i in rng.choice(len(pasted), args.two_line, False)], True)
    one = plates_found(reader, args.scenes, [photos[i] for i in rng.choice(len(photos), args.one_line, False)], False)
    print(f"{len(two)} two-line plates found in {args.two_line} pasted train scenes; {len(one)} one-line plates in "
          f"{args.one_line} train photos\n")
    print("| reading as two rows | two-line plates read right | one-line plates read right | one-line plates read as "
          "rows too |\n|---|---|---|---|")
    for name, rule in RULES.items():
        right_two = sum(read_by(rule, plate)[0] == plate["text"] for plate in two)
        right_one = sum(read_by(rule, plate)[0] == plate["text"] for plate in one)
        rows_read = sum(read_by(rule, plate)[1] for plate in one)
        print(f"| {name} | {right_two} of {len(two)} | {right_one} of {len(one)} | {rows_read} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
