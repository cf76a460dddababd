"""The two-line reader on real material: every held-out real one-line private plate read by eye (`A123BC77`, the test
split of labels/, never trained on) recut as the type 1A plate that carries the same text, its letter and three
digits stacked over its two letters and region (`A123` over `BC77`), and read as served two-line plates are read
(rows apart, `lprnet_rows`); beside it, the same plate read whole by the one-line reader. The labels hold 4 real
two-line plates; this reads hundreds of real plates' characters, dirt, blur and light laid out in two rows.

    poetry run python benchmarks/rows_of_real_plates.py [--split test] [--sheet runs/rows_of_real_plates.png]

The plate is restacked by plates.training.stacked (about four in ten can be parted: the others are counted and left
out); both readers then take the served first cut (yolo's first crop variant) from the models of the committed model
repository, in one process. Where the parting is wrong the stack cuts a character: --sheet shows each misread plate
beside its stack, to look at the misses as pictures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT, shared_dir
from plates.evaluation.misreads import Misreads
from plates.recognition.crops import CropVariant, crop_box
from plates.recognition.ctc import read_plates
from plates.recognition.formats import ONE_LINE, plate_format
from plates.recognition.rows import join_rows, read_joined, split_rows
from plates.training.by_eye import load_labels
from plates.training.dataset import served_cut, to_tensor
from plates.training.real_plates import real_plates, split_of
from plates.training.stacked import as_type_1a


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("train", "val", "test"), default="test", help="of labels/ (test)")
    parser.add_argument("--repository", type=Path, default=DEFAULT_REPOSITORY, help="the built model repository")
    parser.add_argument(
        "--sheet", type=Path, help="also draw the plates either reader misread, each beside its stack, into this PNG"
    )
    args = parser.parse_args(argv)
    labels = [label for path in sorted((PROJECT_ROOT / "labels").glob("*.json")) for label in load_labels(path)]
    plates = [
        p
        for p in real_plates(labels, shared_dir() / "data", lines=(1,))
        if plate_format(p.text) == "private" and split_of(p.text) == args.split
    ]
    networks = {
        name: torch.jit.load(str(args.repository / name / "1" / "model.pt"), map_location="cpu").eval()
        for name in ("stn", "lprnet", "lprnet_rows")
    }
    whole, rows, texts, sheet, unparted = [], [], [], [], 0
    for plate in plates:
        image = cv2.imread(plate.image)
        if image is None:
            raise SystemExit(f"{plate.image}: not an image")
        tight = image if plate.box is None else crop_box(image, np.asarray(plate.box), CropVariant(0.0))
        stacked = as_type_1a(tight)
        if stacked is None:
            unparted += 1
            continue
        whole.append(served_cut(tight, None))
        rows.append(served_cut(stacked, None, 2, "rows"))
        texts.append(plate.text)
        if args.sheet:
            sheet.append((cv2.resize(tight, (282, 72)), cv2.resize(stacked, (122, 72))))
    with torch.inference_mode():
        one = networks["lprnet"](networks["stn"](to_tensor(np.stack(whole)))).numpy()
        count, lines = len(texts), [2] * len(texts)
        joined, frames = join_rows(networks["lprnet_rows"](split_rows(to_tensor(np.stack(rows)), lines)), lines)
    read_whole = [r.text for r in read_plates(one, grammar=ONE_LINE)]
    read_rows = [r.text for r in read_joined(joined.numpy(), frames.numpy(), lines)]
    results = {"one-line reader, the plate whole": read_whole, "lprnet_rows, the plate stacked as type 1A": read_rows}
    print(
        f"{len(plates)} real private plates of the {args.split} split read by eye (labels/), in one process; "
        f"{unparted} not parted (fewer than 6 characters found, or no wider gap after the fourth), {count} read"
    )
    for name, readings in results.items():
        misreads = Misreads()
        for text, got in zip(texts, readings):
            misreads.add(text, got)
        outcomes = misreads.to_dict()["outcomes"]
        right = outcomes["right"]
        print(
            f"{name}: read right {right} of {count} ({right / count:.3f}); "
            + ", ".join(f"{outcome} {n}" for outcome, n in outcomes.items() if outcome != "right")
        )
        print(f"  confusions: {misreads.to_dict()['confusions']}")
        print("  misread: " + ", ".join(f"{truth} as {got or '(unread)'}" for truth, got in misreads.examples))
    both = sum(a == t == b for t, a, b in zip(texts, read_whole, read_rows))
    rescued = sum(b == t != a for t, a, b in zip(texts, read_whole, read_rows))
    print(f"both right {both}; stacked right where whole wrong {rescued}")
    if args.sheet:
        missed = [i for i, text in enumerate(texts) if text != read_whole[i] or text != read_rows[i]]
        tiles = [np.concatenate([sheet[i][0], np.zeros((72, 8, 3), np.uint8), sheet[i][1]], axis=1) for i in missed]
        if not tiles:
            tiles = [np.zeros((72, 412, 3), np.uint8)]
        columns = 4
        tiles += [np.zeros_like(tiles[0])] * (-len(tiles) % columns)
        grid = np.concatenate(
            [np.concatenate(tiles[i : i + columns], axis=1) for i in range(0, len(tiles), columns)], axis=0
        )
        args.sheet.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.sheet), grid)
        print(f"sheet: {args.sheet}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
