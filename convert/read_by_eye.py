"""Read the training plates by eye: sheets to read them from, the typed readings merged into labels/, disputes.

    python convert/read_by_eye.py sheets        # runs/by_eye/sheets/*.png: 16 plates a sheet, no text beside them
    # type one line per plate into runs/by_eye/readings/*.txt (plates/training/by_eye.py says how)
    python convert/read_by_eye.py show TILE ...  # runs/by_eye/show/TILE.png: one plate, large
    python convert/read_by_eye.py check FILE    # what is wrong in a readings file, if anything
    python convert/read_by_eye.py recognize --recognizer plates    # runs/by_eye/readers/plates.json: its readings
    python convert/read_by_eye.py disputes      # where a reading differs from the data's hint or the recognizers':
                                                # runs/by_eye/disputes/*.png, one plate each, to look at again
    # look again at each disputed plate: runs/by_eye/second/*.txt, the same lines, replacing the first reading
    python convert/read_by_eye.py merge         # labels/*.json from the readings and the second looks
    python convert/read_by_eye.py manifest      # runs/by_eye/test.json: the held-out plates, for `plates eval`

Sources: `detect` (../shared/data/detect's train split less every photo e2e.json lists; never its val split),
`crops` (../shared/data/rfplates/crops, whose file names carry unchecked texts) and `scenes`
(../shared/data/rfplates/scenes). A later line for a tile (the second looks are read last) replaces an earlier one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.training.by_eye import (
    TILES_PER_SHEET,
    Label,
    ReadingError,
    Tile,
    crop_tiles,
    dispute_picture,
    hint_of_crop,
    parse_line,
    save_labels,
    sheet,
    yolo_tiles,
)

DATA = shared_dir() / "data"
WORK = PROJECT_ROOT / "runs" / "by_eye"
LABELS = PROJECT_ROOT / "labels"
PREFIXES = {"detect": "d", "crops": "c", "scenes": "s"}
ABOUT = {
    "detect": {
        "source": "../shared/data/detect, train split, less every photo ../shared/data/e2e.json lists",
        "licence": "the photos' own: Volga IT 2025 semi-final set (no licence stated), "
        "dstaroff/russian-license-plate-recognition (GPL-3.0); these texts are this project's (MIT)",
    },
    "crops": {
        "source": "../shared/data/rfplates/crops: 'Russian License Plates Detector' v3 by test-aomwr on Roboflow "
        "Universe (universe.roboflow.com/test-aomwr/russian-license-plates-detector/dataset/3)",
        "licence": "CC BY 4.0; credit test-aomwr and Roboflow Universe wherever weights trained on it are published",
    },
    "scenes": {
        "source": "../shared/data/rfplates/scenes: 'Russian License Plates Detector' v3 by test-aomwr on Roboflow "
        "Universe (universe.roboflow.com/test-aomwr/russian-license-plates-detector/dataset/3)",
        "licence": "CC BY 4.0; credit test-aomwr and Roboflow Universe wherever weights trained on it are published",
    },
}
METHOD = (
    "Read by eye from enlarged crops (plates/training/by_eye.py), with no text beside them; then each reading that "
    "differed from the file name's text or from a recognizer's reading was looked at again, larger, and settled. "
    "A text is given only where every character is certain: 'doubt' keeps '?' where a character is not, "
    "'illegible', 'foreign' (not a Russian registration plate) and 'notplate' carry none. Boxes are the data's own."
)


def tiles(source: str) -> list[Tile]:
    # Both import torch: only when the tiles are first listed, not for every check of a typed file.
    from plates.evaluation.manifests import load_yolo
    from plates.training.real_plates import training_photos

    prefix = PREFIXES[source]
    if source == "detect":
        return yolo_tiles(prefix, training_photos(DATA / "detect", DATA / "e2e.json"), DATA)
    if source == "crops":
        return crop_tiles(prefix, DATA / "rfplates" / "crops.json", DATA)
    photos = load_yolo(DATA / "rfplates" / "scenes", split="")
    return yolo_tiles(prefix, ((p.image, [plate.box for plate in p.plates]) for p in photos if p.plates), DATA)


def all_tiles() -> dict[str, Tile]:
    """Every source's tiles, kept in runs/by_eye/tiles.json once listed: listing the scenes decodes 1,774 photos."""
    cache = WORK / "tiles.json"
    if cache.is_file():
        rows = json.loads(cache.read_text())
        return {
            row["id"]: Tile(row["id"], row["image"], None if row["box"] is None else tuple(row["box"])) for row in rows
        }
    known = {tile.id: tile for source in PREFIXES for tile in tiles(source)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([{"id": t.id, "image": t.image, "box": t.box} for t in known.values()], indent=0))
    return known


def make_sheets(args) -> int:
    folder = WORK / "sheets"
    folder.mkdir(parents=True, exist_ok=True)
    index = {}
    for source in args.sources:
        source_tiles = tiles(source)
        for number, start in enumerate(range(0, len(source_tiles), TILES_PER_SHEET)):
            part = source_tiles[start : start + TILES_PER_SHEET]
            path = folder / f"{source}_{number:03d}.png"
            cv2.imwrite(str(path), sheet(part, DATA))
            index[path.name] = [tile.id for tile in part]
        print(f"{source}: {len(source_tiles)} plates on {number + 1} sheets in {folder}")
    (WORK / "sheets.json").write_text(json.dumps(index, indent=0))
    return 0


def typed_lines() -> dict[str, tuple[str, str | None, int]]:
    """Every tile's last typed reading: the first readings (runs/by_eye/readings/*.txt), then the second looks at
    the disputed ones (runs/by_eye/second/*.txt), each folder in name order."""
    readings = {}
    for path in sorted((WORK / "readings").glob("*.txt")) + sorted((WORK / "second").glob("*.txt")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            try:
                parsed = parse_line(line)
            except ReadingError as error:
                raise ReadingError(f"{path.name} line {number}: {error}") from error
            if parsed:
                tile, *reading = parsed
                readings[tile] = tuple(reading)
    return readings


def show(args) -> int:
    """Each named tile alone, large, its region block larger still: runs/by_eye/show/TILE.png."""
    known = all_tiles()
    folder = WORK / "show"
    folder.mkdir(parents=True, exist_ok=True)
    for tile_id in args.files:
        if tile_id not in known:
            print(f"error: no tile {tile_id}", file=sys.stderr)
            return 65
        path = folder / f"{tile_id}.png"
        cv2.imwrite(str(path), dispute_picture(known[tile_id], DATA, []))
        print(f"wrote {path}")
    return 0


def check(args) -> int:
    """Parse typed readings files and say what is wrong in them, without writing anything."""
    known = all_tiles() if args.files else {}
    problems = 0
    for path in args.files:
        read = 0
        for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
            try:
                parsed = parse_line(line)
            except ReadingError as error:
                print(f"{path} line {number}: {error}")
                problems += 1
                continue
            if parsed and parsed[0] not in known:
                print(f"{path} line {number}: no tile {parsed[0]}")
                problems += 1
            read += parsed is not None
        print(f"{path}: {read} readings")
    return 65 if problems else 0


def held_out_copies(known: dict[str, Tile]) -> set[str]:
    """The detect photos among the tiles that are copies of held-out photos (plates.training.real_plates): read
    before the copies were found, and never labelled."""
    from plates.training.real_plates import held_out_looks, is_held_out_copy

    looks = held_out_looks(DATA / "detect", DATA / "e2e.json")
    images = {tile.image for tile in known.values() if tile.id.startswith(PREFIXES["detect"])}
    return {image for image in images if is_held_out_copy(DATA / image, looks)}


def merge(args) -> int:
    known = all_tiles()
    readings = typed_lines()
    unknown = sorted(set(readings) - set(known))
    if unknown:
        print(f"error: readings of tiles no source has: {', '.join(unknown[:10])}", file=sys.stderr)
        return 65
    copies = held_out_copies(known)
    known = {tile_id: tile for tile_id, tile in known.items() if tile.image not in copies}
    print(f"left out: {len(copies)} detect photos that are copies of held-out ones")
    LABELS.mkdir(exist_ok=True)
    for source, prefix in PREFIXES.items():
        source_tiles = [tile for tile in known.values() if tile.id.startswith(prefix)]
        missing = [tile.id for tile in source_tiles if tile.id not in readings]
        labels = [Label(t.image, t.box, *readings[t.id]) for t in source_tiles if t.id in readings]
        counts = {
            status: sum(label.status == status for label in labels)
            for status in ("read", "doubt", "illegible", "foreign", "notplate")
        }
        about = {**ABOUT[source], "method": METHOD, "counts": counts}
        save_labels(labels, LABELS / f"{source}.json", about)
        print(f"{source}: {len(labels)} of {len(source_tiles)} plates labelled ({len(missing)} not yet read): {counts}")
    return 0


def recognize(args) -> int:
    """Each tile read by a recognizer as served (its two cuts voted): runs/by_eye/readers/NAME.json, the hints that
    `disputes` holds the readings against. --recognizer names the weights (plates.build.repository.RECOGNIZERS)."""
    import numpy as np
    import torch

    from plates.build.repository import RECOGNIZERS, load_network
    from plates.build.weights import find_weights
    from plates.nets import LPRNet, SpatialTransformer
    from plates.recognition.crops import SERVED_VARIANTS, crop_box, cut_crops, normalize
    from plates.recognition.ctc import read_plates, vote
    from plates.training.augment import tight_as_photo

    names = RECOGNIZERS[args.recognizer]
    stn = load_network(SpatialTransformer, find_weights(names["stn"]))
    lprnet = load_network(LPRNet, find_weights(names["lprnet"]))
    texts, photos = {}, {}
    for tile in all_tiles().values():
        if tile.image not in photos:
            photos.clear()
            photos[tile.image] = cv2.imread(str(DATA / tile.image))
        image = photos[tile.image]
        if tile.box is None:
            photo, box = tight_as_photo(image)
            cuts = [crop_box(photo, box, variant) for variant in SERVED_VARIANTS]
        else:
            cuts = cut_crops(image, np.array([tile.box], np.float32), SERVED_VARIANTS)
        with torch.inference_mode():
            logits = lprnet(stn(torch.from_numpy(np.stack([normalize(cut) for cut in cuts])))).numpy()
        texts[tile.id] = vote(read_plates(logits), len(cuts))[0].text
    folder = WORK / "readers"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{args.recognizer}.json").write_text(json.dumps(texts, indent=0))
    print(f"wrote {folder / args.recognizer}.json: {sum(map(bool, texts.values()))} of {len(texts)} tiles read")
    return 0


DISPUTES_PER_SHEET = 5


def disputes(args) -> int:
    """Where a reading (status read) differs from a hint: the crops' file-name texts, and each recognizer's reading
    given in --readers (JSON of {tile id: text}). Sheets of DISPUTES_PER_SHEET plates, each with the reading and the
    hints as numbered options in a shuffled order, to look at again: runs/by_eye/disputes/*.png."""
    import numpy as np

    known = all_tiles()
    readings = typed_lines()
    hints: dict[str, set[str]] = {}
    for tile in known.values():
        if tile.box is None:
            hints.setdefault(tile.id, set()).add(hint_of_crop(tile.image))
    for path in args.readers:
        for tile_id, text in json.loads(Path(path).read_text()).items():
            if text:
                hints.setdefault(tile_id, set()).add(text)
    disputed = [
        (tile_id, sorted(hints[tile_id] | {text}))
        for tile_id, (status, text, _) in sorted(readings.items())
        if status == "read" and hints.get(tile_id, set()) - {text}
    ]
    folder = WORK / "disputes"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for number, start in enumerate(range(0, len(disputed), DISPUTES_PER_SHEET)):
        rows = [
            dispute_picture(known[tile_id], DATA, list(rng.permutation(options)))
            for tile_id, options in disputed[start : start + DISPUTES_PER_SHEET]
        ]
        cv2.imwrite(str(folder / f"disputes_{number:03d}.png"), np.concatenate(rows))
    print(f"{len(disputed)} plates to look at again on {number + 1} sheets in {folder}")
    return 0


def manifest(args) -> int:
    """A `plates eval` manifest of the photos that hold a plate of --lines rows of the --split split (by its text:
    plates.training.real_plates.split_of; `all`: every split): each with every box the data gives it, and the texts
    read by eye of those plates. Tight crops are left out: the detector is not made for a plate that fills the photo."""
    from plates.training.by_eye import load_labels
    from plates.training.real_plates import split_of

    by_photo: dict[str, list[Label]] = {}
    for path in sorted(LABELS.glob("*.json")):
        for label in load_labels(path):
            if label.box is not None:
                by_photo.setdefault(label.image, []).append(label)

    def text(label: Label) -> str | None:
        kept = label.trainable and label.lines == args.lines and args.split in ("all", split_of(label.text))
        return label.text if kept else None

    entries = [
        {"image": str(DATA / image), "plates": [{"box": list(label.box), "text": text(label)} for label in labels]}
        for image, labels in sorted(by_photo.items())
        if any(text(label) for label in labels)
    ]
    out = args.out or WORK / f"{args.split}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(entries, indent=1))
    print(
        f"wrote {out}: {len(entries)} photos, {sum(p['text'] is not None for e in entries for p in e['plates'])} "
        f"texts of the {args.split} split"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("verb", choices=["sheets", "show", "check", "recognize", "disputes", "merge", "manifest"])
    parser.add_argument("files", nargs="*", help="show: tile ids; check: the readings files to check")
    parser.add_argument("--sources", nargs="+", choices=list(PREFIXES), default=list(PREFIXES))
    parser.add_argument("--readers", nargs="*", default=[], help="disputes: JSON files of recognizers' readings")
    parser.add_argument("--recognizer", default="plates", help="recognize: whose weights (plates, pretrained)")
    parser.add_argument(
        "--split", choices=["train", "val", "test", "all"], default="test", help="manifest: whose texts"
    )
    parser.add_argument("--lines", type=int, choices=[1, 2], default=1, help="manifest: plates of how many rows")
    parser.add_argument("--out", type=Path, help="manifest: where to write it (runs/by_eye/SPLIT.json)")
    args = parser.parse_args(argv)
    try:
        return {
            "sheets": make_sheets,
            "show": show,
            "check": check,
            "recognize": recognize,
            "disputes": disputes,
            "merge": merge,
            "manifest": manifest,
        }[args.verb](args)
    except ReadingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 65


if __name__ == "__main__":
    sys.exit(main())
