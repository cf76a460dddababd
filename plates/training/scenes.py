"""The detector's training scenes: rendered plates, one-line and two-line, drawn into real photos over real plates'
places and elsewhere, at every scale from small to half the frame; and real plates cut into close-ups, with nothing
synthetic in them.

A pasted scene: each real plate of the photo is, with REPLACE_SHARE, erased (inpainted) and covered by a rendered
plate centred on its place (a one-line plate fitted to its box; a two-line one 0.55 to 0.9 as wide, as a 290 mm
plate on a 520 mm place); then up to EXTRA_PLATES more are drawn where no plate is, 14 px to half the
photo wide (log-uniform). Each rendered plate is put in perspective (plates.training.augment.plate_corners, and a
side turned away now and then), lit as the photo: its dark and light levels mapped to those of the real plate it
covers (or, elsewhere, to the neighbourhood's, its light level somewhat brighter or darker), its colour cast the
photo's; blurred as much as the photo's real plates are (the Gaussian blur that gives a rendered plate the
edges of the real one it covers, `edge_blur`: blur in pixels is the camera's and the rescaling's, much the same
across a frame), with the photo's noise. A rendered plate the frame cuts (over a real plate at the photo's edge, or
taller than the one it covers) is boxed as far as it shows, with no text: its text is not all in the photo, so it
is neither read in evaluation nor learnt from. A real plate left in place keeps its class; its lines are read by eye
where labels say (labels/*.json), else it is one-line.

A close-up: a window of the photo around a real plate (at least CLOSEUP_MIN_WIDTH px wide) such that the plate
fills 30 to 60 % of its width, 1 to 1.8 times as wide as tall; other plates it would cut are avoided where it can,
and are labelled where most of them shows.

A background: a window of the photo beside one of its real plates (above it, where the grille, badge and lettering
are, or to a side, where the lights are), 1.5 to 4 times the plate's width, that shows no plate: the real negatives
a detector trained on pasted scenes lacks, which drew boxes on lettering, badges, grilles and lights. Its label file
is empty.

Everything is drawn from generator (seed, split, kind, index): a scene is the same whichever process draws it.


The photos they are drawn from, their plates and their split: plates.training.scene_photos.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from plates.training import synthetic
from plates.training.augment import plate_corners
from plates.training.scene_photos import Box, Photo, ScenePlate

REPLACE_SHARE = 0.6  # of real plates covered by a rendered one
TWO_LINE_SHARE = 0.5  # of rendered plates that are two-line
EXTRA_PLATES = 3  # at most, drawn elsewhere in a scene
SMALLEST = 14  # px: the narrowest rendered plate
LARGEST = 0.5  # of the photo's width: the widest
CLOSEUP_FILL = (0.3, 0.6)  # of the close-up's width the plate fills
CLOSEUP_ASPECT = (1.0, 1.8)  # the close-up's width over its height
CLOSEUP_MIN_WIDTH = 60  # px: narrower plates, enlarged to a close-up, show no more than they do
BACKGROUND_SCALE = (1.5, 4.0)  # the background window's width over its plate's
# of a plate's width and height its box is grown by before a window must miss it: boxes drawn tight to the
# characters leave the plate's rim outside them
BACKGROUND_MARGIN = 0.3
BACKGROUND_MIN_SIDE = 48  # px: a window clipped to less than this is not taken
VISIBLE = 0.6  # a plate a window cuts is labelled when this much of its box shows
BLURS = (0.0, 0.5, 0.8, 1.2, 1.7, 2.4, 3.2, 4.5)  # Gaussian sigmas (px) tried to match a real plate's edges


@dataclass
class Scene:
    image: np.ndarray
    plates: list[ScenePlate]
    source: Path
    kind: str  # "pasted", "closeup" or "background"


# Pasted scenes


def _in_frame(corners: np.ndarray, width: int, height: int) -> bool:
    """Whether a plate drawn on `corners` lies wholly in a frame of `width` x `height`."""
    return bool((corners >= 0).all() and (corners[:, 0] <= width).all() and (corners[:, 1] <= height).all())


def _overlaps(box: Sequence[float], others: Iterable[Sequence[float]], margin: float = 0.1) -> bool:
    x1, y1, x2, y2 = box
    grow_x, grow_y = margin * (x2 - x1), margin * (y2 - y1)
    return any(x1 - grow_x < o[2] and o[0] < x2 + grow_x and y1 - grow_y < o[3] and o[1] < y2 + grow_y for o in others)


def _grown(box: Sequence[float], share: float, width: int, height: int) -> tuple[int, int, int, int]:
    """`box` grown by `share` of its size on every side, in whole pixels within width x height."""
    x1, y1, x2, y2 = box
    dx, dy = share * (x2 - x1) + 2, share * (y2 - y1) + 2
    return (
        max(0, math.floor(x1 - dx)),
        max(0, math.floor(y1 - dy)),
        min(width, math.ceil(x2 + dx)),
        min(height, math.ceil(y2 + dy)),
    )


def erase(image: np.ndarray, box: Sequence[float]) -> None:
    """Paint over the plate in `box` from its surroundings (OpenCV's Telea inpainting), in place; worked at most 48 px
    tall: the rendered plate put there covers most of it."""
    height, width = image.shape[:2]
    left, top, right, bottom = _grown(box, 0.5, width, height)
    hole = _grown(box, 0.06, width, height)
    region = image[top:bottom, left:right]
    mask = np.zeros(region.shape[:2], np.uint8)
    mask[hole[1] - top : hole[3] - top, hole[0] - left : hole[2] - left] = 255
    scale = min(1.0, 48 / max(1.0, box[3] - box[1]))
    small = cv2.resize(region, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else region
    small_mask = cv2.resize(mask, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_NEAREST)
    filled = cv2.inpaint(small, small_mask, 3, cv2.INPAINT_TELEA)
    if scale < 1:
        filled = cv2.resize(filled, (region.shape[1], region.shape[0]), interpolation=cv2.INTER_LINEAR)
    region[mask > 0] = filled[mask > 0]


def _levels(grey: np.ndarray) -> tuple[float, float]:
    """The dark and the light level of a patch: its 5th and 95th percentiles."""
    dark, light = np.percentile(grey, (5, 95))
    return float(dark), float(light)


def edge_blur(grey: np.ndarray) -> float:
    """How blurred a patch's edges are, in pixels: its contrast (95th less 5th percentile) over the steepest of its
    gradients (99th percentile) times sqrt(2 pi), the sigma of a Gaussian-blurred step edge. Noise moves it little."""
    grey = grey.astype(np.float32)
    steep = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    dark, light = _levels(grey)
    return float((light - dark) / (math.sqrt(2 * math.pi) * np.percentile(steep, 99) + 1e-6))


def matched_blur(plate_grey: np.ndarray, reference_grey: np.ndarray) -> float:
    """The sigma of BLURS that gives `plate_grey` the edges of `reference_grey` (the real plate at its place)."""
    target = edge_blur(reference_grey)
    scores = [abs(edge_blur(cv2.GaussianBlur(plate_grey, (0, 0), s) if s else plate_grey) - target) for s in BLURS]
    return BLURS[int(np.argmin(scores))]


def noise_level(grey: np.ndarray) -> float:
    """The photo's pixel noise about a patch: the robust spread of what a 3x3 median takes away."""
    residual = grey.astype(np.float32) - cv2.medianBlur(grey, 3).astype(np.float32)
    return float(1.4826 * np.median(np.abs(residual)))


@dataclass(frozen=True)
class Look:
    """How a rendered plate is made to look like the photo's plates at its place."""

    dark: float  # the grey level its characters (its darkest 5 %) take
    light: float  # the grey level its background (its lightest 5 %) takes
    cast: tuple[float, float, float]  # gain per BGR channel: the photo's colour cast
    blur: float  # Gaussian sigma, px
    noise: float  # standard deviation of the noise added, grey levels


def _cast(patch: np.ndarray) -> tuple[float, float, float]:
    """Half the patch's colour cast (its mean colour over its mean grey): a plate reflects its light, not its
    surroundings' paint."""
    mean = patch.reshape(-1, 3).mean(0) + 1
    return tuple(float(v) for v in np.sqrt(mean / mean.mean()))


def look_of_plate(image: np.ndarray, box: Sequence[float], plate_grey: np.ndarray) -> Look:
    """The look of the real plate in `box`: its levels, its cast, the blur that gives `plate_grey` (a rendered plate
    as wide as it) its edges, and the noise about it."""
    height, width = image.shape[:2]
    x1, y1, x2, y2 = _grown(box, 0.0, width, height)
    patch = image[y1:y2, x1:x2]
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    dark, light = _levels(grey)
    return Look(dark, light, _cast(patch), matched_blur(plate_grey, grey), noise_level(grey))


def look_elsewhere(image: np.ndarray, box: Sequence[float], blur: float, rng: np.random.Generator) -> Look:
    """A look for a plate put where none was: lit as its neighbourhood (its light level 0.8 to 1.3 times the
    neighbourhood's light one, plates reflecting more than most things), blurred by `blur`."""
    height, width = image.shape[:2]
    x1, y1, x2, y2 = _grown(box, 1.0, width, height)
    patch = image[y1:y2, x1:x2]
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    dark, light = _levels(grey)
    light = float(np.clip(light * rng.uniform(0.8, 1.3), 70, 255))
    dark = float(np.clip(dark * rng.uniform(0.3, 1.0), 0, light - 50))
    return Look(dark, light, _cast(patch), blur, noise_level(grey))


def _turned(corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Half the time, one side of the plate turned away: that side's edge shorter (a yaw the camera sees)."""
    if rng.random() < 0.5:
        return corners
    side = [1, 2] if rng.random() < 0.5 else [0, 3]
    middle = corners[:, 1].mean()
    corners = corners.copy()
    corners[side, 1] = middle + (corners[side, 1] - middle) * rng.uniform(0.75, 1.0)
    return corners


def _warp(plate: np.ndarray, corners: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The flat plate warped onto `corners` in an image of `size` (width, height), and its coverage (0 to 1)."""
    plate_width = plate.shape[1]
    shrink = min(1.0, 2 * float(corners[:, 0].max() - corners[:, 0].min()) / plate_width)
    if shrink < 1:  # a perspective warp samples, it does not average: shrink near the final size first
        plate = cv2.resize(plate, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
    h, w = plate.shape[:2]
    source = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    homography = cv2.getPerspectiveTransform(source, corners.astype(np.float32))
    warped = cv2.warpPerspective(plate, homography, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    cover = cv2.warpPerspective(np.ones((h, w), np.float32), homography, size, flags=cv2.INTER_LINEAR)
    return warped, cover


def _region_of(corners: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    x1, y1 = np.floor(corners.min(0)).astype(int) - 4
    x2, y2 = np.ceil(corners.max(0)).astype(int) + 4
    return max(0, x1), max(0, y1), min(width, x2), min(height, y2)


def paste(image: np.ndarray, plate: np.ndarray, corners: np.ndarray, look: Look, rng: np.random.Generator) -> Box:
    """Draw the flat `plate` onto `corners` (image pixels) of `image`, in place, looking as `look` says; its box."""
    height, width = image.shape[:2]
    left, top, right, bottom = _region_of(corners, width, height)
    warped, cover = _warp(plate, corners - [left, top], (right - left, bottom - top))
    inside = cover > 0.99
    grey = cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY)
    dark, light = _levels(grey[inside]) if inside.any() else _levels(grey)
    out = (warped.astype(np.float32) - dark) / max(light - dark, 1.0) * (look.light - look.dark) + look.dark
    out *= np.array(look.cast, np.float32)
    if look.blur:
        out = cv2.GaussianBlur(out, (0, 0), look.blur)
        cover = cv2.GaussianBlur(cover, (0, 0), look.blur)
    out += rng.normal(0, look.noise, out.shape).astype(np.float32)
    region = image[top:bottom, left:right].astype(np.float32)
    alpha = cover[..., None]
    image[top:bottom, left:right] = np.clip(region * (1 - alpha) + out * alpha, 0, 255).astype(np.uint8)
    x1, y1 = np.clip(corners.min(0), 0, [width, height])
    x2, y2 = np.clip(corners.max(0), 0, [width, height])
    return float(x1), float(y1), float(x2), float(y2)


def rendered_plate(rng: np.random.Generator, two_line: bool) -> tuple[np.ndarray, str, str]:
    """A flat rendered plate, its text and its style: two-line or one-line, styles as often as their shares say."""
    style = synthetic.random_two_line_format(rng) if two_line else synthetic.random_format(rng)
    text = synthetic.random_text(style, rng)
    return synthetic.render_plate(text, style, rng), text, style


def _corners_over(box: Sequence[float], plate: np.ndarray, two_line: bool, rng: np.random.Generator) -> np.ndarray:
    """Corners of a rendered plate over a real plate's place, centred on it: a one-line plate tilted as drawn, then
    fitted to cover the real one's box (1 to 1.08 times it each way: the real plate is gone under it); a two-line one
    0.55 to 0.9 as wide, as a 290 mm plate on a 520 mm place, as tall as its shape makes it."""
    x1, y1, x2, y2 = box
    scale = rng.uniform(0.55, 0.9) if two_line else 1.0
    corners = _turned(plate_corners((plate.shape[1], plate.shape[0]), rng, width=(x2 - x1) * scale), rng)
    if not two_line:
        extent = corners.max(0) - corners.min(0)
        corners = (corners - corners.min(0) - extent / 2) * np.array([x2 - x1, y2 - y1]) / extent
        corners *= rng.uniform(1.0, 1.08)
    return corners + [(x1 + x2) / 2, (y1 + y2) / 2]


def _corners_elsewhere(
    image_size: tuple[int, int],
    plate: np.ndarray,
    taken: Sequence[Sequence[float]],
    rng: np.random.Generator,
    tries: int = 30,
) -> np.ndarray | None:
    """Corners of a rendered plate 14 px to half the photo wide (log-uniform), wholly in the photo and clear of
    every plate in `taken`; None where none of `tries` places is."""
    width, height = image_size
    largest = LARGEST * width
    if largest <= SMALLEST:
        return None
    plate_width = math.exp(rng.uniform(math.log(SMALLEST), math.log(largest)))
    corners = _turned(plate_corners((plate.shape[1], plate.shape[0]), rng, width=plate_width), rng)
    low, high = corners.min(0), corners.max(0)
    if (high - low)[0] >= width - 2 or (high - low)[1] >= height - 2:
        return None
    for _ in range(tries):
        centre = rng.uniform(1 - low, [width - 1, height - 1] - high)
        box = (*(low + centre), *(high + centre))
        if not _overlaps(box, taken):
            return corners + centre
    return None


def pasted_scene(
    photo: Photo,
    rng: np.random.Generator,
    replace_share: float = REPLACE_SHARE,
    two_line_share: float = TWO_LINE_SHARE,
    extra_plates: int = EXTRA_PLATES,
) -> Scene:
    """The photo with rendered plates over some of its real plates and in other places (the module says how)."""
    image = _read(photo.path)
    height, width = image.shape[:2]
    plates: list[ScenePlate] = []
    blurs = []
    for real in photo.plates:
        if rng.random() >= replace_share:
            plates.append(real)
            continue
        two_line = rng.random() < two_line_share
        flat, text, style = rendered_plate(rng, two_line)
        corners = _corners_over(real.box, flat, two_line, rng)
        look = real_look(image, real, rng)  # measured before the real plate is painted over
        erase(image, real.box)
        shown = text if _in_frame(corners, width, height) else None
        plates.append(ScenePlate(paste(image, flat, corners, look, rng), synthetic.lines(style), shown, style))
        blurs.append(look.blur)
    # Blur is the camera's and the rescaling's, in pixels: the photo's real plates say how much.
    blur = float(np.median(blurs)) if blurs else float(rng.choice(BLURS[:4]))
    for _ in range(int(rng.integers(0, extra_plates + 1))):
        two_line = rng.random() < two_line_share
        flat, text, style = rendered_plate(rng, two_line)
        corners = _corners_elsewhere((width, height), flat, [p.box for p in plates], rng)
        if corners is None:
            continue
        plate_height = float(corners[:, 1].max() - corners[:, 1].min())
        look = look_elsewhere(image, (*corners.min(0), *corners.max(0)), min(blur, plate_height / 8), rng)
        plates.append(ScenePlate(paste(image, flat, corners, look, rng), synthetic.lines(style), text, style))
    return Scene(image, plates, photo.path, "pasted")


def real_look(image: np.ndarray, real: ScenePlate, rng: np.random.Generator) -> Look:
    """The look of a real plate, its blur found with a rendered plate of its kind (lines) drawn as wide as it."""
    flat, _, _ = rendered_plate(rng, real.lines == 2)
    width = max(2, round(real.box[2] - real.box[0]))
    height = max(2, round(width * flat.shape[0] / flat.shape[1]))
    small = cv2.resize(cv2.cvtColor(flat, cv2.COLOR_BGR2GRAY), (width, height), interpolation=cv2.INTER_AREA)
    return look_of_plate(image, real.box, small)


def _read(path: Path) -> np.ndarray:
    image = cv2.imread(str(path))
    if image is None:
        raise ValueError(f"{path}: not an image OpenCV reads")
    return image


# Close-ups


def closeup(
    photo: Photo,
    rng: np.random.Generator,
    fill: tuple[float, float] = CLOSEUP_FILL,
    min_width: float = CLOSEUP_MIN_WIDTH,
    tries: int = 10,
) -> Scene | None:
    """A window of the photo in which one of its real plates fills `fill` of the width (the module says how); None
    where no plate of the photo can."""
    if not any(p.box[2] - p.box[0] >= min_width for p in photo.plates):
        return None  # known without reading the photo
    image = _read(photo.path)
    height, width = image.shape[:2]
    fits = [p for p in photo.plates if p.box[2] - p.box[0] >= min_width and (p.box[2] - p.box[0]) / width <= fill[1]]
    if not fits:
        return None
    chosen = fits[int(rng.integers(len(fits)))]
    x1, y1 = max(0.0, chosen.box[0]), max(0.0, chosen.box[1])
    x2, y2 = min(width, chosen.box[2]), min(height, chosen.box[3])
    plate_width, plate_height = x2 - x1, y2 - y1
    share = rng.uniform(max(fill[0], plate_width / width), fill[1])
    window_width = min(float(width), plate_width / share)
    window_height = min(float(height), max(window_width / rng.uniform(*CLOSEUP_ASPECT), 1.2 * plate_height))
    best = None
    for _ in range(tries):
        left = rng.uniform(max(0.0, x2 - window_width), min(x1, width - window_width))
        top = rng.uniform(max(0.0, y2 - window_height), max(0.0, min(y1, height - window_height)))
        window = (left, top, left + window_width, top + window_height)
        cut = [_visible(p.box, window) for p in photo.plates if p is not chosen]
        clean = all(v == 0 or v >= 0.999 for v in cut)
        if best is None or clean:
            best = window
        if clean:
            break
    left, top, right, bottom = (round(v) for v in best)
    plates = []
    for plate in photo.plates:
        if _visible(plate.box, best) >= VISIBLE:
            box = (
                max(plate.box[0], left) - left,
                max(plate.box[1], top) - top,
                min(plate.box[2], right) - left,
                min(plate.box[3], bottom) - top,
            )
            plates.append(ScenePlate(box, plate.lines, plate.text))
    return Scene(np.ascontiguousarray(image[top:bottom, left:right]), plates, photo.path, "closeup")


def background(
    photo: Photo, rng: np.random.Generator, scale: tuple[float, float] = BACKGROUND_SCALE, tries: int = 10
) -> Scene | None:
    """A window of the photo beside one of its plates that shows none (the module says how); None where `tries`
    windows all touch a plate or the frame leaves too little of them."""
    if not photo.plates:
        return None
    image = _read(photo.path)
    height, width = image.shape[:2]
    boxes = [p.box for p in photo.plates]
    for _ in range(tries):
        x1, y1, x2, y2 = photo.plates[int(rng.integers(len(photo.plates)))].box
        window_width = (x2 - x1) * rng.uniform(*scale)
        window_height = window_width / rng.uniform(*CLOSEUP_ASPECT)
        gap = (y2 - y1) * rng.uniform(0.4, 0.8)
        side = rng.choice(("above", "left", "right"), p=(0.6, 0.2, 0.2))
        if side == "above":
            left = (x1 + x2) / 2 - window_width * rng.uniform(0.3, 0.7)
            top = y1 - gap - window_height
        else:
            left = x1 - gap - window_width if side == "left" else x2 + gap
            top = (y1 + y2) / 2 - window_height * rng.uniform(0.3, 0.7)
        left, top = max(0.0, left), max(0.0, top)
        right, bottom = min(float(width), left + window_width), min(float(height), top + window_height)
        window = (left, top, right, bottom)
        touches = any(_overlaps(box, [window], BACKGROUND_MARGIN) for box in boxes)
        if min(right - left, bottom - top) < BACKGROUND_MIN_SIDE or touches:
            continue
        left, top, right, bottom = (round(v) for v in (left, top, right, bottom))
        return Scene(np.ascontiguousarray(image[top:bottom, left:right]), [], photo.path, "background")
    return None


def _visible(box: Sequence[float], window: Sequence[float]) -> float:
    """The share of `box`'s area inside `window`."""
    width = min(box[2], window[2]) - max(box[0], window[0])
    height = min(box[3], window[3]) - max(box[1], window[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return max(0.0, width) * max(0.0, height) / area if area > 0 else 0.0
