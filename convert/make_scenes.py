"""Make the detector's training scenes: rendered plates, one-line and two-line, drawn into real photos, and real
plates cut into close-ups (plates.training.scenes); a YOLO dataset with manifests (plates.training.scene_set).

    python convert/make_scenes.py write [--scenes 4000] [--closeups 1000] [--backgrounds 0]  # runs/scenes: the set
    python convert/make_scenes.py sheet                                     # runs/scenes/sheet_*.png: a look at it
    python convert/make_scenes.py plates                                    # runs/scenes/two_line_plates.png
    python convert/make_scenes.py closeups ../shared/data/e2e.json         # runs/closeups: a close-up of each
                                                                            # labelled plate, and its manifest

Photos: ../shared/data/detect/images/train (less e2e.json's photos and copies of held-out ones) and
../shared/data/rfplates/scenes (CC BY 4.0: credit test-aomwr and Roboflow Universe wherever weights trained on it
are published), split into train and val by photo group (--val-share). Labels read by eye (labels/*.json) give the
real plates' lines (two-line plates are class 1) and texts. Train a detector on it with
`python convert/train_detector.py --data runs/scenes` (its data.yaml lists both classes). Everything is seeded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH, SERVED_VARIANTS, cut_crops, side_by_side
from plates.training import synthetic
from plates.training.by_eye import load_labels
from plates.training.scene_photos import TWO_LINE, load_photos, split_photos
from plates.training.scene_set import KINDS, Counts, counts_of, write_scene_set
from plates.training.scenes import EXTRA_PLATES

SHARED = shared_dir() / "data"
LABELS = sorted((PROJECT_ROOT / "labels").glob("*.json"))
COLOURS = {"photo": (60, 200, 60), "one-line": (0, 165, 255), "two-line": (255, 0, 255)}  # BGR


def write(args) -> int:
    labels = [label for path in args.labels for label in load_labels(path)]
    if not labels:
        print("no labels read by eye (labels/*.json): every real plate is taken for a one-line plate", flush=True)
    started = time.perf_counter()
    photos = load_photos(args.detect, args.rfplates, args.e2e, labels, SHARED, log=lambda line: print(line, flush=True))
    splits = split_photos(photos, args.val_share)
    counts = counts_of(Counts(args.scenes, args.closeups, args.backgrounds), args.val_share)
    print(
        f"photos: {len(splits['train'])} train, {len(splits['val'])} val ({time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    started = time.perf_counter()
    records = write_scene_set(
        splits,
        args.out,
        counts,
        args.seed,
        args.processes,
        originals=not args.no_originals,
        extra_plates=args.extra_plates,
        log=lambda line: print(line, flush=True),
    )
    seconds = time.perf_counter() - started
    made = sum(record["kind"] != "photo" for record in records)
    print(
        f"wrote {args.out}: {made} scenes in {seconds:.0f} s ({seconds / max(made, 1) * 1000:.0f} ms a scene, "
        f"{args.processes} process(es)), {len(records) - made} photos linked"
    )
    return 0


def _tile(image: np.ndarray, side: int) -> np.ndarray:
    scale = side / max(image.shape[:2])
    image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    tile = np.zeros((side, side, 3), np.uint8)
    tile[: image.shape[0], : image.shape[1]] = image
    return tile


def _grid(tiles: list[np.ndarray], columns: int) -> np.ndarray:
    blank = np.zeros_like(tiles[0])
    tiles = tiles + [blank] * (-len(tiles) % columns)
    return np.concatenate([np.concatenate(tiles[i : i + columns], 1) for i in range(0, len(tiles), columns)])


def sheet(args) -> int:
    """A sample of the written images of each kind, every labelled box drawn: real plates green, rendered one-line
    orange, rendered two-line magenta."""
    records = json.loads((args.out / "scenes.json").read_text())
    rng = np.random.default_rng(args.seed)
    for kind in KINDS:
        chosen = [r for r in records if r["kind"] == kind]
        if not chosen:
            continue
        chosen = [chosen[i] for i in sorted(rng.choice(len(chosen), min(12, len(chosen)), replace=False))]
        tiles = []
        for record in chosen:
            image = cv2.imread(str(args.out / record["image"]))
            thickness = max(1, round(max(image.shape[:2]) / 500))
            for plate in record["plates"]:
                colour = COLOURS[
                    "photo" if plate["style"] is None else "two-line" if plate["class"] == TWO_LINE else "one-line"
                ]
                x1, y1, x2, y2 = (round(v) for v in plate["box"])
                cv2.rectangle(image, (x1, y1), (x2, y2), colour, thickness)
            tiles.append(_tile(image, 480))
        path = args.out / f"sheet_{kind}.png"
        cv2.imwrite(str(path), _grid(tiles, 4))
        print(f"wrote {path}: {len(tiles)} {kind} images, {', '.join(chosen[i]['image'] for i in range(len(chosen)))}")
    return 0


def plates(args) -> int:
    """Rendered two-line plates of each style beside the recognizer's input made of them (side_by_side, 94x24), and
    the real two-line plates read by eye, cut as served, made so too."""
    rng = np.random.default_rng(args.seed)
    rows = []
    for style in synthetic.TWO_LINE_STYLES:
        for _ in range(3):
            text = synthetic.random_text(style, rng)
            plate = synthetic.render_plate(text, style, rng)
            rows.append((_fit(plate, 300, 180), side_by_side(plate), text))
    labels = [label for path in args.labels for label in load_labels(path) if label.lines == 2 and label.trainable]
    for label in labels:
        image = cv2.imread(str(SHARED / label.image))
        cut = cut_crops(image, np.array([label.box], np.float32), SERVED_VARIANTS[:1])[0]
        rows.append((_fit(cut, 300, 180), side_by_side(cut), f"{label.text} (real)"))
    lines = []
    for flat, line, text in rows:
        line = cv2.resize(
            cv2.resize(line, (CROP_WIDTH, CROP_HEIGHT), interpolation=cv2.INTER_CUBIC),
            None,
            fx=4,
            fy=4,
            interpolation=cv2.INTER_NEAREST,
        )
        canvas = np.full((190, 300 + 10 + line.shape[1], 3), 255, np.uint8)
        canvas[5 : 5 + flat.shape[0], : flat.shape[1]] = flat
        canvas[5 : 5 + line.shape[0], 310:] = line
        cv2.putText(canvas, text, (310, 150), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 2)
        lines.append(canvas)
    picture = _grid(lines, 2)
    cv2.imwrite(str(args.sheet), picture)
    print(
        f"wrote {args.sheet}: rendered two-line plates and {len(labels)} real ones, each beside its side-by-side "
        "input as the recognizer sees it (94x24, shown 4x)"
    )
    return 0


def closeups(args) -> int:
    """A `plates eval` manifest of close-ups of a manifest's photos: for each photo with a plate whose text is known
    (a per-plate text, or a photo-level one of its single box), a window of the photo that one of its plates fills 30
    to 60 % of (plates.training.scenes.closeup, the rule of the training close-ups, whose narrowest plate is 60 px),
    with every plate the window shows."""
    from plates.evaluation.manifests import load_manifest
    from plates.training.scene_photos import Photo, ScenePlate
    from plates.training.scenes import closeup

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    entries, skipped = [], 0
    for number, labelled in enumerate(load_manifest(args.manifest)):
        if not any(plate.text for plate in labelled.plates):
            continue
        photo = Photo(labelled.image, tuple(ScenePlate(p.box, 1, p.text) for p in labelled.plates), np.zeros(256, bool))
        scene = closeup(photo, rng)
        if scene is None:
            skipped += 1
            continue
        name = f"{number:04d}_{labelled.image.stem}.jpg"
        cv2.imwrite(str(out / name), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        entries.append(
            {"image": name, "plates": [{"box": [float(v) for v in p.box], "text": p.text} for p in scene.plates]}
        )
    (out / "closeups.json").write_text(json.dumps(entries, indent=1))
    texts = sum(p["text"] is not None for entry in entries for p in entry["plates"])
    print(
        f"wrote {out / 'closeups.json'}: {len(entries)} close-ups, {texts} texts ({skipped} photos whose plates are "
        "all narrower than the minimum left out)"
    )
    return 0


def _fit(image: np.ndarray, width: int, height: int) -> np.ndarray:
    scale = min(width / image.shape[1], height / image.shape[0])
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("verb", choices=["write", "sheet", "plates", "closeups"])
    parser.add_argument("manifest", nargs="?", help="closeups: the plates eval manifest whose photos to cut")
    parser.add_argument("--out", type=Path, help="where to write (runs/scenes; closeups: runs/closeups)")
    parser.add_argument("--scenes", type=int, default=4000, help="pasted scenes, train and val together")
    parser.add_argument("--closeups", type=int, default=1000, help="close-ups, train and val together")
    parser.add_argument(
        "--backgrounds",
        type=int,
        default=0,
        help="windows beside a plate that show none (empty labels), train and val together",
    )
    parser.add_argument(
        "--extra-plates",
        type=int,
        default=EXTRA_PLATES,
        help="at most this many rendered plates a pasted scene draws where no plate is",
    )
    parser.add_argument("--val-share", type=float, default=0.1, help="of photo groups (and of scenes) for val")
    parser.add_argument("--no-originals", action="store_true", help="leave the photos themselves out of the set")
    parser.add_argument("--labels", type=Path, nargs="*", default=LABELS, help="plates read by eye (labels/*.json)")
    parser.add_argument("--detect", type=Path, default=SHARED / "detect", help="its val split is never used")
    parser.add_argument("--rfplates", type=Path, default=SHARED / "rfplates" / "scenes")
    parser.add_argument("--e2e", type=Path, default=SHARED / "e2e.json", help="photos never to use")
    parser.add_argument("--sheet", type=Path, default=PROJECT_ROOT / "runs" / "scenes" / "two_line_plates.png")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = PROJECT_ROOT / "runs" / ("closeups" if args.verb == "closeups" else "scenes")
    return {"write": write, "sheet": sheet, "plates": plates, "closeups": closeups}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
