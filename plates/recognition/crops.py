"""Cutting plate crops out of a photo, ready for the STN: [N, 3, 24, 94] float32, RGB, scaled to [-1, 1].

The recognizer was trained on crops cut from frames at 1920x1080, with 20% of the box height added above and below,
and resized to 94x24 with cubic interpolation. Crops are cut the same way: from the photo rescaled to that frame.
On the labelled set (data/e2e.json, ground-truth boxes, best-path decoding) this reads 60 of 75 plates; cutting
from the photo at its own size reads 58.

Each plate can be cut several ways (variants: other vertical paddings, a box a little narrower or wider) and read
once per cut; `plates.recognition.ctc.vote` then keeps the text the cuts agree on. Wider cuts matter most with
detected boxes, which often end tight on the region's last digit. With the pretrained reader and the constrained
decoder, on the 75 photos, the 15 variants of DEFAULT_VARIANTS read 69 plates from the ground-truth boxes and 66 from
the first detector's boxes; one cut read 62 and 52. This project's reader was trained on cuts of every pad and
margin around jittered boxes: the two of SERVED_VARIANTS read as many as its 15 do (docs/recognizer.md).

A photo much smaller than that frame (car.jpg is 780x439) is enlarged to it, not sharpened: the reference's reader
needed an unsharp mask there to read car.jpg's C, and this project's reader (trained on such enlarged plates,
docs/recognizer.md) reads it better without one (its 15 cuts vote B840CK197 unsharpened, B840OK197 sharpened).

Only each plate's neighbourhood of that frame is made: the region its cuts cover, resized from whole blocks of the
photo (pixels that become a whole number of frame pixels and read no
pixel outside), so the cuts are those of the whole rescaled frame, pixel for pixel. A plate whose every cut is wider
than SHRUNK_CUT_WIDTH, which `fit` averages down anyway, is cut at that width from the photo's own pixels instead.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from plates.recognition.tilt import ESTIMATE_SIDE, PLATE_ASPECT, TILT_MARGIN, levelled_size, plate_tilt, tilt_bound

CROP_HEIGHT, CROP_WIDTH = 24, 94
DEFAULT_VERTICAL_PAD = 0.2
REFERENCE_FRAME = (1920, 1080)  # width, height


@dataclass(frozen=True)
class CropVariant:
    vertical_pad: float = DEFAULT_VERTICAL_PAD  # share of the box height added above and below
    horizontal_margin: float = 0.0  # share of the box width added left and right (negative: narrower)


def variants(vertical_pads: Sequence[float], horizontal_margins: Sequence[float]) -> tuple[CropVariant, ...]:
    return tuple(CropVariant(p, m) for p in vertical_pads for m in horizontal_margins)


DEFAULT_VARIANTS = variants((0.1, 0.2, 0.3), (-0.03, 0.0, 0.03, 0.06, 0.1))
# What `yolo` cuts now (its config's crop_vertical_pads and crop_horizontal_margins): this project's recognizer,
# trained on cuts of any pad and margin around jittered boxes, reads from these two what the 15 above gave the
# pretrained one to vote over. DEFAULT_VARIANTS stay the cuts the pretrained reader labels training plates with.
SERVED_VARIANTS = variants((0.1, 0.2), (0.03,))


def crop_bounds(box: np.ndarray, variant: CropVariant, width: int, height: int) -> tuple[int, int, int, int]:
    """Left, top, right, bottom of `box` (x1, y1, x2, y2) grown as `variant` says, clipped to width x height; at least
    1x1."""
    x1, y1, x2, y2 = (float(v) for v in box)
    pad = (y2 - y1) * variant.vertical_pad
    margin = (x2 - x1) * variant.horizontal_margin
    x1, x2 = x1 - margin, x2 + margin
    left = int(np.clip(np.floor(x1), 0, width - 1))
    top = int(np.clip(np.floor(y1 - pad), 0, height - 1))
    right = int(np.clip(np.floor(x2), left + 1, width))
    bottom = int(np.clip(np.floor(y2 + pad), top + 1, height))
    return left, top, right, bottom


def crop_box(image: np.ndarray, box: np.ndarray, variant: CropVariant = CropVariant()) -> np.ndarray:
    """The pixels of `box` (x1, y1, x2, y2) grown as `variant` says, clipped to the image; at least 1x1."""
    left, top, right, bottom = crop_bounds(box, variant, image.shape[1], image.shape[0])
    return image[top:bottom, left:right]


def scale_pixels(bgr: np.ndarray) -> np.ndarray:
    """uint8 BGR pixels (..., H, W, 3) to the recognizer's RGB values in [-1, 1], float32, still channels last."""
    return (bgr[..., ::-1].astype(np.float32) - 127.5) * 0.0078125


# A cut is averaged where it is shrunk more than this: nearer the crop's width cubic skips no pixel, and averaging
# only blurs. car.jpg's 38 px plate, 100 px wide in the frame, read B840OK197 averaged in 4 of 6 frames of the test
# video and in 2 of 6 cubically; the 2,424 plates read by eye read the same at 1.25 and 1.5 (docs/recognizer.md).
AVERAGE_BEYOND = 1.5


# A cut wider than this in the frame is averaged down to the reader's crop anyway (fit), so it is cut at this width
# from the photo's own pixels (frame_patch), not from a neighbourhood of the frame: a close-up's plate 1,900 frame px
# wide made 6 to 13 ms of frame pixels only to be averaged away. At three times the crop's width (twice read the
# test plates' B994YX35 levelled as B994YX34), its 94x24 crop differs from the frame's by 2 levels of 255 on average
# over 276 cuts that wide in 150 rfplates scenes; docs/performance.md measures what it reads.
SHRUNK_CUT_WIDTH = 3 * CROP_WIDTH


def fit(cut_bgr: np.ndarray, average_beyond: float = AVERAGE_BEYOND) -> np.ndarray:
    """A cut of any size resized to the recognizer's 94x24, BGR uint8: averaged over its pixels (INTER_AREA) where it
    is more than `average_beyond` times as wide as the crop, cubic otherwise.

    Cubic interpolation samples 4 pixels a tap: shrinking a 300 px plate to 94 skips most of its pixels, and the thin
    strokes of the region code alias into other digits. Over the 2,424 one-line plates read by eye, cut from their own
    boxes as served (most 200 px wide and up in the frame), the committed recognizer (trained on cubic cuts) read
    2,306 of them from averaged cuts against 2,103 from cubic ones; a cut up to `average_beyond` times the crop's
    width is resized as before (docs/recognizer.md)."""
    averaged = cut_bgr.shape[1] > average_beyond * CROP_WIDTH
    interpolation = cv2.INTER_AREA if averaged else cv2.INTER_CUBIC
    return cv2.resize(cut_bgr, (CROP_WIDTH, CROP_HEIGHT), interpolation=interpolation)


def normalize(crop_bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 crop of any size to the recognizer's CHW RGB float input."""
    return np.ascontiguousarray(scale_pixels(fit(crop_bgr)).transpose(2, 0, 1))


# A two-line plate's cut is parted into its rows: the parts meet at the middle of the cut, and each reaches
# TWO_LINE_OVERLAP (share of the cut's height) past it (side_by_side says why).
TWO_LINE_PARTING = 0.5
TWO_LINE_OVERLAP = 0.1
# How the recognizer is given a two-line plate: its rows side by side in one 94x24 crop (side_by_side), or its rows
# apart, each a 94x24 crop (rows_apart), their frames read on as one text (plates.recognition.rows). A recognizer
# reads the layout it was trained on (convert/train_recognizer.py --two-line); docs/scenes.md compares them.
TWO_LINE_LAYOUTS = ("side-by-side", "rows")


def side_by_side(
    cut_bgr: np.ndarray, parting: float = TWO_LINE_PARTING, overlap: float = TWO_LINE_OVERLAP
) -> np.ndarray:
    """A two-line plate's cut as one line, BGR: its upper part (the top row) left of its lower part (the bottom row),
    each as wide as the cut and stretched to the same height. The upper part ends `overlap` below `parting` (a share
    of the cut's height), the lower one starts `overlap` above it, so that a row the parting line crosses (a plate
    tilted, or boxed loosely) stays whole in its part.

    Measured (`git log -- benchmarks/two_line_split.py`): of 1,200 cuts of rendered two-line plates (cut as served,
    tilted and boxed with the detector's error), the middle with 0.1 of overlap left both rows whole in 97% (0.08: 94%,
    0.12: 98.5%), each part holding about a quarter of the other row's ink at its edge; parting instead at the row of
    least ink between the rows did worse (88% at 0.1), misled by tilted rows, the region's frame and shadows. On the 4
    real two-line plates read by eye (rfplates/scenes), cut as served, the top row ends at 0.44 to 0.49 of the cut's
    height (one's, its digits run into the plate's dark rim, at about 0.47 by eye) and the bottom row starts at 0.51 to
    0.61: whole in both parts."""
    upper, lower = row_parts(cut_bgr, parting, overlap)
    rows = max(1, round((len(upper) + len(lower)) / 2))
    width = cut_bgr.shape[1]
    parts = [cv2.resize(part, (width, rows), interpolation=cv2.INTER_AREA) for part in (upper, lower)]
    return np.concatenate(parts, axis=1)


def row_parts(
    cut_bgr: np.ndarray, parting: float = TWO_LINE_PARTING, overlap: float = TWO_LINE_OVERLAP
) -> tuple[np.ndarray, np.ndarray]:
    """A two-line plate's cut parted into its upper part (the top row) and lower part (the bottom row), each
    reaching `overlap` past `parting` (side_by_side says why)."""
    height = cut_bgr.shape[0]
    upper = cut_bgr[: max(1, round((parting + overlap) * height))]
    lower = cut_bgr[min(height - 1, round((parting - overlap) * height)) :]
    return upper, lower


def rows_apart(cut_bgr: np.ndarray) -> np.ndarray:
    """A two-line plate's cut as two recognizer inputs, BGR uint8 at 94x24 each, laid left and right (24x188): its
    upper and lower parts (row_parts), each resized as `normalize` resizes a one-line cut (fit). Each row is read as a
    one-line crop is, and the two rows' frames are read on as one text (plates.recognition.rows): every row gets the
    recognizer's whole width, where side_by_side gives it half."""
    return np.concatenate([fit(part) for part in row_parts(cut_bgr)], axis=1)


def normalize_two_line(cut_bgr: np.ndarray) -> np.ndarray:
    """A two-line plate's cut as the recognizer's CHW RGB float input: side_by_side, then normalize (94x24)."""
    return normalize(side_by_side(cut_bgr))


def normalize_rows(cut_bgr: np.ndarray) -> np.ndarray:
    """A two-line plate's cut as the recognizer's CHW RGB float inputs, its rows apart: 24x188 (rows_apart)."""
    return np.ascontiguousarray(scale_pixels(rows_apart(cut_bgr)).transpose(2, 0, 1))


@functools.lru_cache
def _blocks(size: int, frame_size: int) -> tuple[int, int, bool]:
    """How cv2.resize maps a side of `size` photo pixels onto `frame_size`: in blocks, every `period` photo pixels
    becoming `frame_period` frame pixels that read no photo pixel of another block, so that resizing whole blocks
    gives the whole resize's pixels; unless `rounds_down`: some block's first frame pixel reads the block before."""
    divisor = math.gcd(size, frame_size)
    period, frame_period = size // divisor, frame_size // divisor
    # Unless both sides shrink, INTER_AREA reads frame pixel i from photo pixel floor(i * scale) (and the next),
    # computed in floating point with the scale below (the same for whole blocks: same ratio). At a block's start
    # the product can fall just short of the whole number, where a resize starting at that block has 0. Averaging,
    # when both sides shrink, does not round so, but is treated alike.
    scale = 1 / (frame_size / size)
    rounds_down = any(math.floor(k * frame_period * scale) < k * period for k in range(1, divisor))
    return period, frame_period, rounds_down


def _source_span(start: int, stop: int, size: int, frame_size: int) -> tuple[slice, int, int]:
    """The photo's pixels to resize for frame pixels [start, stop): the blocks that hold them (from the photo's edge
    where a block's first sample rounds down), and the first and stop frame pixels they become."""
    period, frame_period, rounds_down = _blocks(size, frame_size)
    first = 0 if rounds_down else start // frame_period
    last = -(-stop // frame_period)
    return slice(first * period, last * period), first * frame_period, last * frame_period


def _neighbourhood(image: np.ndarray, left: int, top: int, right: int, bottom: int) -> tuple[np.ndarray, int, int]:
    """Pixels of the photo rescaled to REFERENCE_FRAME that hold the frame's [top:bottom, left:right], and their
    origin in the frame."""
    height, width = image.shape[:2]
    frame_width, frame_height = REFERENCE_FRAME
    if (width, height) == REFERENCE_FRAME:
        return image, 0, 0
    columns, x, x_stop = _source_span(left, right, width, frame_width)
    rows, y, y_stop = _source_span(top, bottom, height, frame_height)
    scaled = cv2.resize(image[rows, columns], (x_stop - x, y_stop - y), interpolation=cv2.INTER_AREA)
    return scaled[top - y : bottom - y, left - x : right - x], left, top


def whole_frame_cuts(
    image: np.ndarray, boxes: np.ndarray, crop_variants: Sequence[CropVariant] = DEFAULT_VARIANTS
) -> list[np.ndarray]:
    """The definition `cut_crops` keeps to pixel for pixel, the slow way: the whole photo rescaled to REFERENCE_FRAME,
    then cut. For tests."""
    height, width = image.shape[:2]
    frame = image
    if (width, height) != REFERENCE_FRAME:
        frame = cv2.resize(image, REFERENCE_FRAME, interpolation=cv2.INTER_AREA)
    scale = np.array([REFERENCE_FRAME[0] / width, REFERENCE_FRAME[1] / height] * 2, np.float32)
    return [crop_box(frame, box, variant) for box in np.asarray(boxes, np.float32) * scale for variant in crop_variants]


def cut_crops(
    image: np.ndarray,
    boxes: np.ndarray,
    crop_variants: Sequence[CropVariant] = (CropVariant(),),
    tilts: Sequence[float] | None = None,
) -> list[np.ndarray]:
    """BGR cuts of the photo rescaled to REFERENCE_FRAME for the boxes `boxes` ([N, 4]
    in image pixels), the variants of box 0 first: what prepare_crops normalizes. A box of a nonzero tilt in `tilts`
    (None: none; box_tilts) is cut levelled (level_cuts); one whose every cut is wider than SHRUNK_CUT_WIDTH is cut
    shrunk, its narrowest cut that wide."""
    crops = []
    for number, box in enumerate(frame_boxes(image, boxes)):
        if tilts is not None and tilts[number]:
            crops += level_cuts(image, box, float(tilts[number]), crop_variants)
            continue
        bounds = [crop_bounds(box, variant, *REFERENCE_FRAME) for variant in crop_variants]
        lefts, tops, rights, bottoms = zip(*bounds)
        narrowest = min(right - left for left, _, right, _ in bounds)
        if narrowest > SHRUNK_CUT_WIDTH:
            crops += _shrunk_cuts(image, bounds, SHRUNK_CUT_WIDTH / narrowest)
            continue
        region, x, y = _neighbourhood(image, min(lefts), min(tops), max(rights), max(bottoms))
        crops += [region[top - y : bottom - y, left - x : right - x] for left, top, right, bottom in bounds]
    return crops


def _shrunk_cuts(image: np.ndarray, bounds: Sequence[tuple[int, int, int, int]], scale: float) -> list[np.ndarray]:
    """The cuts of REFERENCE_FRAME's `bounds` (left, top, right, bottom) at `scale` times the frame's resolution, cut
    from one patch of the pixels under them all (frame_patch)."""
    lefts, tops, rights, bottoms = zip(*bounds)
    region, x, y = frame_patch(image, (min(lefts), min(tops), max(rights), max(bottoms)), scale)
    cuts = []
    for left, top, right, bottom in bounds:
        column, row = max(0, round(left * scale - x)), max(0, round(top * scale - y))
        cuts.append(
            region[row : max(row + 1, round(bottom * scale - y)), column : max(column + 1, round(right * scale - x))]
        )
    return cuts


def frame_boxes(image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """`boxes` ([N, 4] in the image's pixels) in the pixels of the image rescaled to REFERENCE_FRAME."""
    height, width = image.shape[:2]
    frame_width, frame_height = REFERENCE_FRAME
    scale = np.array([frame_width / width, frame_height / height] * 2, dtype=np.float32)
    return np.asarray(boxes, dtype=np.float32).reshape(-1, 4) * scale


def frame_patch(image: np.ndarray, bounds: tuple[int, int, int, int], scale: float) -> tuple[np.ndarray, float, float]:
    """The pixels of REFERENCE_FRAME's [top:bottom, left:right] (`bounds`, within the frame) at `scale` times the
    frame's resolution, made from the photo by one averaging resize of the pixels under them, and their origin in
    those scaled frame pixels. Cheaper than _neighbourhood where `scale` shrinks: no frame-sized pixels are made."""
    left, top, right, bottom = bounds
    height, width = image.shape[:2]
    to_photo_x, to_photo_y = width / REFERENCE_FRAME[0], height / REFERENCE_FRAME[1]
    columns = slice(
        math.floor(left * to_photo_x), max(math.floor(left * to_photo_x) + 1, math.ceil(right * to_photo_x))
    )
    rows = slice(math.floor(top * to_photo_y), max(math.floor(top * to_photo_y) + 1, math.ceil(bottom * to_photo_y)))
    pixels = image[rows, columns]
    # The frame pixels the photo's whole pixels cover, so that the patch's origin is where its first pixel lies.
    x, y = columns.start / to_photo_x * scale, rows.start / to_photo_y * scale
    size = (
        max(1, round(pixels.shape[1] / to_photo_x * scale)),
        max(1, round(pixels.shape[0] / to_photo_y * scale)),
    )
    return cv2.resize(pixels, size, interpolation=cv2.INTER_AREA), x, y


# A plate tilted less than this many degrees is read upright only: its levelled cut differs from the upright one by
# about a pixel of climb over a row, and reading it again costs the reader's batch a crop.
MIN_TILT = 3.0


def box_tilts(
    image: np.ndarray, boxes: np.ndarray, lines: Sequence[int], below: float, min_tilt: float = MIN_TILT
) -> np.ndarray:
    """Each box's plate tilt in degrees (plate_tilt, counterclockwise), where it is a one-line plate (`lines`) boxed
    less than `below` times as wide as tall, tilted at least `min_tilt`, and a rectangle of that tilt fits the box
    (levelled_size); 0 for every other box. `boxes`: [N, 4] in the image's pixels.

    The box's shape is judged in the photo's pixels, where a plate has the standard's proportions; its tilt is
    measured, and levelled, in the frame it is cut from (REFERENCE_FRAME), which stretches a photo of another shape:
    a 4:3 photo's plates are a third wider there, and tilted less."""
    tilts = np.zeros(len(boxes), np.float32)
    photo_boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    height, width = image.shape[:2]
    stretch = (REFERENCE_FRAME[0] / width) / (REFERENCE_FRAME[1] / height)  # how much wider the frame makes a plate
    for number, (photo_box, box, count) in enumerate(zip(photo_boxes, frame_boxes(image, boxes), lines)):
        photo_width, photo_height = float(photo_box[2] - photo_box[0]), float(photo_box[3] - photo_box[1])
        if count != 1 or photo_height <= 0 or photo_width >= below * photo_height:
            continue
        frame_width, frame_height = float(box[2] - box[0]), float(box[3] - box[1])
        bounds = crop_bounds(box, CropVariant(0.0, 0.0), *REFERENCE_FRAME)
        scale = min(1.0, ESTIMATE_SIDE / max(bounds[2] - bounds[0], bounds[3] - bounds[1]))
        tight = cv2.cvtColor(frame_patch(image, bounds, scale)[0], cv2.COLOR_BGR2GRAY)
        angle = plate_tilt(tight, tilt_bound(frame_width / frame_height, PLATE_ASPECT * stretch) + TILT_MARGIN)
        if abs(angle) >= min_tilt and levelled_size(frame_width, frame_height, angle):
            tilts[number] = angle
    return tilts


def level_cuts(
    image: np.ndarray, box: np.ndarray, angle: float, crop_variants: Sequence[CropVariant]
) -> list[np.ndarray]:
    """The cuts of a one-line plate tilted by `angle` degrees (box_tilts) in `box` (x1 y1 x2 y2 in REFERENCE_FRAME's
    pixels), levelled: the frame turned about the box's centre by `angle`, and each variant's pads and margins laid
    around the level plate's own width and height (levelled_size)."""
    frame_width, frame_height = REFERENCE_FRAME
    x1, y1, x2, y2 = (float(v) for v in box)
    size = levelled_size(x2 - x1, y2 - y1, angle)
    if size is None:
        raise ValueError(f"no plate tilted {angle} degrees has the box {x2 - x1:.0f}x{y2 - y1:.0f}")
    plate_width, plate_height = size
    widest = max(plate_width * (1 + 2 * v.horizontal_margin) for v in crop_variants)
    tallest = max(plate_height * (1 + 2 * v.vertical_pad) for v in crop_variants)
    reach = math.hypot(widest, tallest) / 2 + 2
    centre_x, centre_y = (x1 + x2) / 2, (y1 + y2) / 2
    left, top = max(0, math.floor(centre_x - reach)), max(0, math.floor(centre_y - reach))
    right = min(frame_width, math.ceil(centre_x + reach))
    bottom = min(frame_height, math.ceil(centre_y + reach))
    # Turned and cut in a fraction of the pixels where wide (SHRUNK_CUT_WIDTH).
    shrink = min(1.0, SHRUNK_CUT_WIDTH / plate_width)
    region, x, y = frame_patch(image, (left, top, right, bottom), shrink)
    centre = (centre_x * shrink - x, centre_y * shrink - y)
    turn = cv2.getRotationMatrix2D(centre, angle, 1.0)
    cuts = []
    for variant in crop_variants:
        cut_width = max(1, round(plate_width * shrink * (1 + 2 * variant.horizontal_margin)))
        cut_height = max(1, round(plate_height * shrink * (1 + 2 * variant.vertical_pad)))
        # The turn, then the cut's corner moved to the origin: one warp gives the cut, the frame past its edges
        # repeated as a box at the edge is cut clipped.
        shifted = turn - np.array([[0, 0, centre[0] - cut_width / 2], [0, 0, centre[1] - cut_height / 2]])
        cuts.append(
            cv2.warpAffine(
                region, shifted, (cut_width, cut_height), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
            )
        )
    return cuts


def prepare_crops(
    image: np.ndarray,
    boxes: np.ndarray,
    crop_variants: Sequence[CropVariant] = (CropVariant(),),
    lines: Sequence[int] | None = None,
    layout: str = "side-by-side",
    tilts: Sequence[float] | None = None,
) -> np.ndarray:
    """Recognizer inputs for the boxes `boxes` ([N, 4] in image pixels): [N * V, 3, 24, 94 * L], the V variants of
    box 0 first. A plate of 2 `lines` (None: every plate has 1) is laid out as `layout` says (TWO_LINE_LAYOUTS):
    side by side in one crop (L = 1), or with its rows apart, left to right (normalize_rows, L = 2); a crop of
    fewer rows than the widest is zero past them (plates.recognition.rows reads them: crop_rows says how many). A
    one-line plate of a nonzero tilt in `tilts` (None: none; box_tilts) is cut levelled (level_cuts)."""
    if len(boxes) == 0:
        return np.zeros((0, 3, CROP_HEIGHT, CROP_WIDTH), dtype=np.float32)
    two_line = normalize_rows if two_line_layout(layout) == "rows" else normalize_two_line
    plate_lines = np.ones(len(boxes), np.int64) if lines is None else np.asarray(lines)
    levelled = None if tilts is None else np.where(plate_lines == 1, np.asarray(tilts, np.float32), 0.0)
    crops = cut_crops(image, boxes, crop_variants, levelled)
    normalized = [
        two_line(crop) if n == 2 else normalize(crop)
        for crop, n in zip(crops, np.repeat(plate_lines, len(crop_variants)))
    ]
    inputs = np.zeros((len(crops), 3, CROP_HEIGHT, max(crop.shape[-1] for crop in normalized)), np.float32)
    for row, crop in zip(inputs, normalized):
        row[..., : crop.shape[-1]] = crop
    return inputs


def two_line_layout(text: str) -> str:
    """A config value naming how two-line plates are given to the recognizer: one of TWO_LINE_LAYOUTS."""
    if text not in TWO_LINE_LAYOUTS:
        raise ValueError(f"must be one of {', '.join(TWO_LINE_LAYOUTS)}")
    return text


def crop_rows(lines: np.ndarray, layout: str) -> np.ndarray:
    """How many 94x24 rows each plate of `lines` rows of characters takes in its crops, laid out as `layout`."""
    return np.asarray(lines, np.int64) if two_line_layout(layout) == "rows" else np.ones(len(lines), np.int64)
