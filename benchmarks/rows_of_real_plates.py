"""The two-line reader on real material: every held-out real one-line private plate read by eye (`A123BC77`, the test
split of labels/, never trained on) recut as the two-line plates that its characters make (plates.training.stacked):
type 1A, its letter and three digits over its two letters and region (`A123` over `BC77`), and four digits over two
letters as on motorcycles and tractors, one of its digits in its letter's place (`1123` over `BC77`). Each is read
as served two-line plates are read (rows apart, `lprnet_rows`); beside them, the plate read whole by the one-line
reader. The labels hold 4 real two-line plates; this reads hundreds of real plates' characters, dirt, blur and light
laid out in two rows.

    poetry run python benchmarks/rows_of_real_plates.py [--split test] [--repository DIR ...] [--sheet PNG]

About four plates in ten can be parted (the others are counted and left out); the readers take the served first cut
(yolo's first crop variant) from the models of each model repository given (the committed one by default), all in
one process, on the same stacks. Where the parting is wrong a stack cuts a character: --sheet draws each plate the
first repository misread beside its stacks, to look at the misses as pictures.
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
from plates.recognition.formats import ONE_LINE, TWO_LINE, plate_format
from plates.recognition.rows import join_rows, read_joined, split_rows
from plates.training.by_eye import load_labels
from plates.training.dataset import served_cut, to_tensor
from plates.training.real_plates import real_plates, split_of
from plates.training.stacked import KINDS, restacked

WHOLE = "one line, whole"
READS = (WHOLE, *KINDS)


def readings(repository: Path, crops: dict[str, np.ndarray]) -> dict[str, list[str]]:
    """What the repository's models read of each set of crops: the one-line reader the whole plates, lprnet_rows
    the stacks."""
    networks = {
        name: torch.jit.load(str(repository / name / "1" / "model.pt"), map_location="cpu").eval()
        for name in ("stn", "lprnet", "lprnet_rows")
    }
    read = {}
    with torch.inference_mode():
        one = networks["lprnet"](networks["stn"](to_tensor(crops[WHOLE]))).numpy()
        read[WHOLE] = [r.text for r in read_plates(one, grammar=ONE_LINE)]
        for kind in KINDS:
            lines = [2] * len(crops[kind])
            joined, frames = join_rows(networks["lprnet_rows"](split_rows(to_tensor(crops[kind]), lines)), lines)
            read[kind] = [r.text for r in read_joined(joined.numpy(), frames.numpy(), lines)]
    return read


def report(name: str, texts: list[str], read: list[str]) -> None:
    misreads = Misreads()
    for text, got in zip(texts, read):
        misreads.add(text, got)
    outcomes, count = misreads.to_dict()["outcomes"], len(texts)
    print(
        f"  {name}: read right {outcomes['right']} of {count} ({outcomes['right'] / count:.3f}); "
        + ", ".join(f"{outcome} {n}" for outcome, n in outcomes.items() if outcome != "right")
    )
    print(f"    confusions: {misreads.to_dict()['confusions']}")
    print("    misread: " + ", ".join(f"{truth} as {got or '(unread)'}" for truth, got in misreads.examples))
    if name != WHOLE:
        allowed = sum(TWO_LINE.allows(got) for got in read if got)
        print(f"    readings a two-line plate the standard allows: {allowed} of {sum(bool(got) for got in read)}")


def draw_sheet(path: Path, tiles: list[np.ndarray]) -> None:
    if not tiles:
        tiles = [np.zeros((72, 282 + 2 * 114 + 3 * 8, 3), np.uint8)]
    columns = 3
    tiles += [np.zeros_like(tiles[0])] * (-len(tiles) % columns)
    grid = np.concatenate([np.concatenate(tiles[i : i + columns], axis=1) for i in range(0, len(tiles), columns)])
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), grid)
    print(f"sheet: {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("train", "val", "test"), default="test", help="of labels/ (test)")
    parser.add_argument(
        "--repository", type=Path, nargs="+", default=[DEFAULT_REPOSITORY], help="built model repositories"
    )
    parser.add_argument("--sheet", type=Path, help="also draw the plates the first repository misread into this PNG")
    args = parser.parse_args(argv)
    labels = [label for path in sorted((PROJECT_ROOT / "labels").glob("*.json")) for label in load_labels(path)]
    plates = [
        p
        for p in real_plates(labels, shared_dir() / "data", lines=(1,))
        if plate_format(p.text) == "private" and split_of(p.text) == args.split
    ]
    crops: dict[str, list[np.ndarray]] = {read: [] for read in READS}
    texts: dict[str, list[str]] = {read: [] for read in READS}
    pictures, unparted = [], 0
    for number, plate in enumerate(plates):
        image = cv2.imread(plate.image)
        if image is None:
            raise SystemExit(f"{plate.image}: not an image")
        tight = image if plate.box is None else crop_box(image, np.asarray(plate.box), CropVariant(0.0))
        stacks = restacked(tight, plate.text, np.random.default_rng([0, number]))
        if not stacks:
            unparted += 1
            continue
        crops[WHOLE].append(served_cut(tight, None))
        texts[WHOLE].append(plate.text)
        for stack in stacks:
            crops[stack.kind].append(served_cut(stack.pixels, None, 2, "rows"))
            texts[stack.kind].append(stack.text)
        pictures.append([cv2.resize(tight, (282, 72))] + [cv2.resize(s.pixels, (114, 72)) for s in stacks])
    count = len(texts[WHOLE])
    print(
        f"{len(plates)} real private plates of the {args.split} split read by eye (labels/), in one process; "
        f"{unparted} not parted (fewer than 6 characters found, no wider gap after the fourth, or letters not "
        f"shorter than digits), {count} read, each whole and as {' and as '.join(KINDS)}"
    )
    stacked = {read: np.stack(crops[read]) for read in READS}
    for order, repository in enumerate(args.repository):
        read = readings(repository, stacked)
        print(f"{repository}:")
        for name in READS:
            report(name, texts[name], read[name])
        if args.sheet and order == 0:
            missed = [i for i in range(count) if any(read[name][i] != texts[name][i] for name in READS)]
            gap = np.zeros((72, 8, 3), np.uint8)
            draw_sheet(args.sheet, [np.concatenate([x for p in pictures[i] for x in (p, gap)], axis=1) for i in missed])
    return 0


if __name__ == "__main__":
    sys.exit(main())
