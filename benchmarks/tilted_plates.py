"""Tilted plates read upright, levelled, both ways with the likelier reading kept, and as served (levelled only where
the upright reading is under --other-ways-below, then the likelier): every one-line plate read by eye (labels/) in a
photo, whose box is less than --below times as wide as tall, cut from its own box as yolo's first cut is
(plates.recognition.crops.level_cuts), and read by the repository's STN and LPRNet in one process. The train split's
plates were trained on, upright; the val and test splits' never.

    poetry run python benchmarks/tilted_plates.py [--below 3] [--repository DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT, shared_dir
from plates.recognition.crops import MIN_TILT, box_tilts, prepare_crops
from plates.recognition.ctc import Reading, read_plates
from plates.recognition.formats import ONE_LINE
from plates.training.by_eye import load_labels
from plates.training.dataset import SERVED_CUT
from plates.training.real_plates import RealPlate, real_plates, split_of


def readings(repository: Path, crops: np.ndarray) -> list[Reading]:
    stn, lprnet = (
        torch.jit.load(str(repository / name / "1" / "model.pt"), map_location="cpu").eval()
        for name in ("stn", "lprnet")
    )
    with torch.inference_mode():
        logits = [lprnet(stn(torch.from_numpy(crops[i : i + 256]))).numpy() for i in range(0, len(crops), 256)]
    return read_plates(np.concatenate(logits), grammar=ONE_LINE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--below", type=float, default=3.0, help="boxes less than this times as wide as tall (3)")
    parser.add_argument("--min-tilt", type=float, default=MIN_TILT, help=f"degrees levelled from ({MIN_TILT:g})")
    parser.add_argument(
        "--other-ways-below", type=float, default=0.8, help="served: levelled where upright reads under this (0.8)"
    )
    parser.add_argument("--repository", type=Path, default=DEFAULT_REPOSITORY, help="a built model repository")
    args = parser.parse_args(argv)
    labels = [label for path in sorted((PROJECT_ROOT / "labels").glob("*.json")) for label in load_labels(path)]
    plates: list[RealPlate] = [
        p
        for p in real_plates(labels, shared_dir() / "data", lines=(1,))
        if p.box is not None and p.box[2] - p.box[0] < args.below * (p.box[3] - p.box[1])
    ]
    if not plates:
        raise SystemExit(f"no plate read by eye is boxed less than {args.below} times as wide as tall")
    photos = [cv2.imread(p.image) for p in plates]
    boxes = [np.array([p.box], np.float32) for p in plates]
    tilts = [box_tilts(photo, box, [1], args.below, args.min_tilt) for photo, box in zip(photos, boxes)]
    read = {}
    for way, levelled in (("upright", False), ("levelled", True)):
        crops = [
            prepare_crops(photo, box, [SERVED_CUT], tilts=tilt if levelled else None)[0]
            for photo, box, tilt in zip(photos, boxes, tilts)
        ]
        read[way] = readings(args.repository, np.stack(crops))
    read["likelier"] = [max(pair, key=lambda r: r.confidence) for pair in zip(read["upright"], read["levelled"])]
    # As served: the levelled way is read only where the upright one reads under plate_recognition's other_ways_below.
    doubted = [bool(tilt[0]) and up.confidence < args.other_ways_below for tilt, up in zip(tilts, read["upright"])]
    read["served"] = [
        likelier if doubt else up for doubt, likelier, up in zip(doubted, read["likelier"], read["upright"])
    ]
    print(
        f"{len(plates)} one-line plates read by eye, boxed less than {args.below} times as wide as tall; "
        f"{sum(bool(t[0]) for t in tilts)} tilted {args.min_tilt:g} degrees or more, read levelled too; "
        f"{sum(doubted)} of them read under {args.other_ways_below:g} upright, read levelled as served:"
    )
    for held_out in (True, False):
        chosen = [i for i, p in enumerate(plates) if (split_of(p.text) != "train") == held_out]
        right = {way: sum(read[way][i].text == plates[i].text for i in chosen) for way in read}
        print(
            f"  {'val and test (never trained on)' if held_out else 'train'}: {len(chosen)} plates, read right "
            + ", ".join(f"{way} {n}" for way, n in right.items())
        )
    for i, plate in enumerate(plates):
        texts = [read[way][i] for way in ("upright", "levelled")]
        if texts[0].text != texts[1].text:
            print(
                f"    {plate.text} ({split_of(plate.text)}, tilted {tilts[i][0]:g}): "
                + ", ".join(f"{way} {r.text or '(unread)'} {r.confidence:.2f}" for way, r in zip(read, texts))
                + f"; served {read['served'][i].text or '(unread)'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
