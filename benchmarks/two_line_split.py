"""Where to part a two-line plate's cut into its rows (plates.recognition.crops.side_by_side): measured on rendered
plates cut as the served pipeline cuts them, and on the real two-line plates read by eye. Figures, not assertions.

    poetry run python benchmarks/two_line_split.py [--plates 600] [--labels labels/scenes.json]

Rendered: two-line plates of every style (plates.training.synthetic), placed as the recognizer's training plates are
(plates.training.augment.plate_corners: rotated, sheared, in perspective) on a plain background, lit and degraded as
they are, boxed with the detector's error (jitter_box) and cut with each of SERVED_VARIANTS. Each row's ink (the
characters; the region's frame left out) goes through the same warp. Two ways to part a cut are scored, each with an
overlap o (share of the cut's height each part reaches past the parting line):
- fixed: at TWO_LINE_PARTING (the middle) of the cut, as plates.recognition.crops.side_by_side does;
- valley: at the pixel row of least ink between 0.35 and 0.65 of the cut's height (`row_valley`).
Per way and overlap: the share of cuts where each part holds the whole of its row (99 % of its ink), and the share
of the other row's ink each part holds on average (what the recognizer must learn to ignore).

Real: each labelled two-line plate cut as served: where its rows end and start, and where each way parts it, as
shares of the cut's height.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from plates.recognition.crops import SERVED_VARIANTS, TWO_LINE_PARTING, crop_bounds, cut_crops
from plates.training import synthetic
from plates.training.augment import _background, _degrade, _photometric, jitter_box, plate_corners
from plates.weights import PROJECT_ROOT

OVERLAPS = (0.0, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15)
VALLEY_SPAN = (0.35, 0.65)


def ink_profile(cut_bgr: np.ndarray) -> np.ndarray:
    """Share of ink in each pixel row of the cut's middle 80 % of columns: the smaller side of an Otsu threshold
    (dark characters on a white plate, light ones on a black plate)."""
    width = cut_bgr.shape[1]
    grey = cv2.cvtColor(cut_bgr, cv2.COLOR_BGR2GRAY)[:, round(0.1 * width) : max(round(0.9 * width), 1)]
    _, dark = cv2.threshold(grey, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return (dark if dark.mean() <= 0.5 else 1 - dark).mean(1)


def row_valley(cut_bgr: np.ndarray) -> float:
    """The middle of the run of pixel rows with the least ink within VALLEY_SPAN (the profile smoothed over 3 % of
    the height), as a share of the cut's height."""
    height = cut_bgr.shape[0]
    window = max(1, round(0.03 * height))
    profile = np.convolve(ink_profile(cut_bgr), np.ones(window) / window, mode="same")
    low, high = round(VALLEY_SPAN[0] * height), max(round(VALLEY_SPAN[1] * height), round(VALLEY_SPAN[0] * height) + 1)
    span = profile[low:high]
    lowest = int(np.argmin(span))
    near = span <= span[lowest] + 0.02 * (profile.max() - span[lowest])
    first = last = lowest
    while first > 0 and near[first - 1]:
        first -= 1
    while last + 1 < len(span) and near[last + 1]:
        last += 1
    return (low + (first + last) / 2 + 0.5) / height


def row_masks(plate: np.ndarray, style: synthetic.TwoLineStyle) -> tuple[np.ndarray, np.ndarray]:
    """The ink of the top row and of the bottom row's characters of a flat plate (its rim and the region's frame
    left out), float32."""
    grey = cv2.cvtColor(plate, cv2.COLOR_BGR2GRAY)
    ink = ((grey > 128) if grey.mean() < 100 else (grey < 128)).astype(np.uint8)
    height, width = ink.shape
    rim = round(0.03 * width)
    ink[:rim], ink[-rim:], ink[:, :rim], ink[:, -rim:] = 0, 0, 0, 0
    left, upper, right, lower = (round(v * s) for v, s in zip(style.region_box, (width, height, width, height)))
    cv2.rectangle(ink, (left, upper), (right, lower), 0, 2 * round(0.015 * width) + 1)
    top, bottom = ink.copy(), ink.copy()
    top[upper - 2 :], bottom[: upper - 2] = 0, 0
    return top.astype(np.float32), bottom.astype(np.float32)


def rendered_cuts(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per cut: the cut (BGR), and the ink of its top row and of its bottom row summed over each of its pixel rows."""
    cuts = []
    for index in range(count):
        rng = np.random.default_rng([seed, index])
        name = synthetic.random_two_line_format(rng)
        plate = synthetic.render_plate(synthetic.random_text(name, rng), name, rng)
        top, bottom = row_masks(plate, synthetic.TWO_LINE_STYLES[name])
        corners = plate_corners((plate.shape[1], plate.shape[0]), rng, width=float(rng.uniform(120, 400)))
        corners += 1000  # inside a large frame: no cut is clipped
        box = jitter_box(np.concatenate([corners.min(0), corners.max(0)]), rng)
        source = np.float32([[0, 0], [plate.shape[1], 0], [plate.shape[1], plate.shape[0]], [0, plate.shape[0]]])
        for variant in SERVED_VARIANTS:
            left, upper, right, lower = crop_bounds(box, variant, 4000, 4000)
            homography = cv2.getPerspectiveTransform(source, (corners - [left, upper]).astype(np.float32))
            size = (right - left, lower - upper)
            scene = _background(size, [], rng)
            cv2.warpPerspective(plate, homography, size, dst=scene, flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_TRANSPARENT)
            scene = _degrade(_photometric(scene, rng), rng)
            profiles = [cv2.warpPerspective(mask, homography, size, flags=cv2.INTER_AREA).sum(1)
                        for mask in (top, bottom)]
            cuts.append((scene, *profiles))
    return cuts


def score(cuts, partings: list[float], overlap: float) -> tuple[float, float, float]:
    """Share of cuts with both rows whole in their parts, and the other row's ink share in the top and bottom part,
    each cut parted at its `partings` share of its height."""
    whole, into_top, into_bottom = 0, [], []
    for (_, top, bottom), parting in zip(cuts, partings):
        rows = len(top)
        upper, lower = round((parting + overlap) * rows), round((parting - overlap) * rows)
        top_total, bottom_total = max(top.sum(), 1e-6), max(bottom.sum(), 1e-6)
        whole += top[:upper].sum() >= 0.99 * top_total and bottom[lower:].sum() >= 0.99 * bottom_total
        into_top.append(bottom[:upper].sum() / bottom_total)
        into_bottom.append(top[lower:].sum() / top_total)
    return whole / len(cuts), float(np.mean(into_top)), float(np.mean(into_bottom))


def character_rows(cut_bgr: np.ndarray) -> tuple[float | None, float | None]:
    """Where a cut's top row of characters ends and its bottom row starts, shares of its height (None: no character
    found in that row): the blobs darker than an Otsu threshold of the cut's middle as tall as a character (12 to 50 %
    of the cut's height, narrower than a quarter of it, clear of its edges), those centred above the middle being
    the top row's."""
    height, width = cut_bgr.shape[:2]
    grey = cv2.cvtColor(cut_bgr, cv2.COLOR_BGR2GRAY)
    middle = grey[round(0.15 * height) : round(0.85 * height), round(0.1 * width) : round(0.9 * width)]
    threshold, _ = cv2.threshold(middle, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    count, _, stats, _ = cv2.connectedComponentsWithStats((grey < threshold).astype(np.uint8))
    tops, bottoms = [], []
    for x, y, w, h, _ in stats[1:count]:
        if 0.12 * height <= h <= 0.5 * height and w < 0.25 * width and x > 0 and x + w < width:
            (tops if y + h / 2 < height / 2 else bottoms).append((y, y + h))
    return (max(end for _, end in tops) / height if tops else None,
            min(start for start, _ in bottoms) / height if bottoms else None)


def real_rows(labels: Path, data: Path) -> None:
    entries = [e for e in json.loads(labels.read_text())["labels"] if e.get("lines") == 2 and e["status"] == "read"]
    print(f"\nreal two-line plates ({labels}), cut as served (pad {SERVED_VARIANTS[0].vertical_pad}, margin "
          f"{SERVED_VARIANTS[0].horizontal_margin}), shares of the cut's height:")
    for entry in entries:
        image = cv2.imread(str(data / entry["image"]))
        cut = cut_crops(image, np.array([entry["box"]], np.float32), SERVED_VARIANTS[:1])[0]
        top_end, bottom_start = character_rows(cut)
        def show(share: float | None) -> str:
            return "(no character found)" if share is None else f"{share:.2f}"

        print(f"  {entry['text']:<10} {cut.shape[1]}x{cut.shape[0]} px: top row ends at {show(top_end)}, bottom row "
              f"starts at {show(bottom_start)}; parted at {TWO_LINE_PARTING:.2f} (fixed), {row_valley(cut):.2f} "
              "(valley)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plates", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--labels", type=Path, default=PROJECT_ROOT / "labels" / "scenes.json")
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    cuts = rendered_cuts(args.plates, args.seed)
    ways = {"fixed": [TWO_LINE_PARTING] * len(cuts), "valley": [row_valley(cut) for cut, _, _ in cuts]}
    print(f"rendered two-line plates: {args.plates}, {len(cuts)} cuts; per way and overlap o: cuts with both rows "
          "whole / other row's ink in the top part / in the bottom part")
    print("  way     " + "".join(f"o={o:<19}" for o in OVERLAPS))
    for way, partings in ways.items():
        cells = [score(cuts, partings, overlap) for overlap in OVERLAPS]
        print(f"  {way:<8}" + "".join(f"{w:5.1%} {t:5.1%} {b:5.1%}   " for w, t, b in cells))
    if args.labels.is_file():
        real_rows(args.labels, args.data)


if __name__ == "__main__":
    main()
