"""Every augmentation of the recognizer's training data, in one place: a flat synthetic plate, or a real photo's
plate, made into the crop the served pipeline would cut of it (plates.recognition.crops), as the detector boxes it.

Written with OpenCV rather than Albumentations: Albumentations requires opencv-python-headless, whose `cv2` would
overwrite the opencv-python that Ultralytics requires in the same environment.

Geometry: the plate is 40 to 600 px wide in the 1920x1080 frame the crops are cut from (log-uniform), rotated,
tilted in perspective, stretched as rescaling a photo of another aspect to that frame stretches it, and boxed with
the detector's imprecision; then cut with a vertical pad and a horizontal margin around the box drawn from a range
that holds every variant `yolo` cuts. Appearance: lighting, colour cast, shadow, glare, dirt, blur, noise, JPEG
artefacts, and now and then the soft enlarged look (half the time with an unsharp mask) of a small photo rescaled
to the frame. Real plates, read by eye, are cut the same way from their photos, or from a tight crop with its edges
repeated around it.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from plates.recognition.crops import CROP_WIDTH, CropVariant, crop_box, cut_crops, fit, rows_apart, side_by_side
from plates.training.synthetic import PIXELS_PER_MM, PLATE_MM

PLATE_WIDTHS = (40.0, 600.0)  # px in the frame, log-uniform
PADS = (0.05, 0.35)  # vertical pad, share of the box height; yolo cuts 0.1 to 0.3
MARGINS = (-0.03, 0.12)  # horizontal margin, share of the box width; yolo cuts 0.03
ENLARGE_SHARE = 0.15  # of synthetic crops made as a small photo rescaled to the frame (car.jpg is one)
# The detector's error on each side, share of the box width and height (standard deviation): against the boxes of
# 136 plates in rfplates/scenes photos it never saw, its left and right edges were off by 5.5 % of the width (0.8 %
# outwards on average), its top and bottom by 8 % of the height.
BOX_JITTER = (0.05, 0.1)


# The unsharp mask the service once put on much enlarged photos (sigma 3 frame pixels, amount 0.8): half the
# enlarged synthetic plates get it, so the recognizer reads both looks (car.jpg's first recognizer needed it).
SHARPEN_SIGMA, SHARPEN_AMOUNT = 3.0, 0.8


def sharpen(image: np.ndarray) -> np.ndarray:
    blurred = cv2.GaussianBlur(image, (0, 0), SHARPEN_SIGMA)
    return cv2.addWeighted(image, 1 + SHARPEN_AMOUNT, blurred, -SHARPEN_AMOUNT, 0)


def _uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(rng.uniform(*bounds))


def jitter_box(box: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`box` (x1, y1, x2, y2) with each side moved as a detector's box misses a plate's edges."""
    x1, y1, x2, y2 = (float(v) for v in box)
    w, h = x2 - x1, y2 - y1
    dx = rng.normal(0, BOX_JITTER[0] * w, 2).clip(-2.5 * BOX_JITTER[0] * w, 2.5 * BOX_JITTER[0] * w)
    dy = rng.normal(0, BOX_JITTER[1] * h, 2).clip(-2.5 * BOX_JITTER[1] * h, 2.5 * BOX_JITTER[1] * h)
    return np.array(
        [x1 + dx[0], y1 + dy[0], max(x2 + dx[1], x1 + dx[0] + 2), max(y2 + dy[1], y1 + dy[0] + 2)], np.float32
    )


def random_variant(rng: np.random.Generator) -> CropVariant:
    return CropVariant(_uniform(rng, PADS), _uniform(rng, MARGINS))


def _background(size: tuple[int, int], backgrounds: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """A `size` (width, height) patch of a random background photo, or a flat colour with noise."""
    width, height = size
    if backgrounds and rng.random() < 0.8:
        photo = backgrounds[int(rng.integers(len(backgrounds)))]
        scale = rng.uniform(0.3, 1.5)
        patch_w = min(photo.shape[1], max(4, round(width / scale)))
        patch_h = min(photo.shape[0], max(4, round(height / scale)))
        x = int(rng.integers(0, photo.shape[1] - patch_w + 1))
        y = int(rng.integers(0, photo.shape[0] - patch_h + 1))
        return cv2.resize(photo[y : y + patch_h, x : x + patch_w], (width, height), interpolation=cv2.INTER_LINEAR)
    colour = rng.uniform(0, 255, 3)
    return np.clip(colour + rng.normal(0, 12, (height, width, 3)), 0, 255).astype(np.uint8)


def plate_corners(plate_size: tuple[int, int], rng: np.random.Generator, width: float | None = None) -> np.ndarray:
    """Where the flat plate's corners land in the frame (around the origin): `width` px wide (None: drawn from
    PLATE_WIDTHS), stretched, rotated, tilted."""
    if width is None:
        width = math.exp(rng.uniform(*np.log(PLATE_WIDTHS)))
    stretch = math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
    height = width * plate_size[1] / plate_size[0] * stretch
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64) - [width / 2, height / 2]
    corners += rng.normal(0, 1, (4, 2)) * [0.025 * width, 0.06 * height]  # perspective: each corner a little off
    angle = math.radians(float(np.clip(rng.normal(0, 4), -12, 12)))
    shear = float(np.clip(rng.normal(0, 0.08), -0.25, 0.25))  # a plate seen from the side leans its verticals
    transform = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]) @ np.array(
        [[1, shear], [0, 1]]
    )
    return corners @ transform.T


def _photometric(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lighting, colour, shadow, glare and dirt, on a BGR uint8 image."""
    height, width = image.shape[:2]
    out = image.astype(np.float32)
    out = out * rng.uniform(0.6, 1.2) + rng.uniform(-30, 30)
    out *= rng.uniform(0.85, 1.15, 3)  # colour cast
    if rng.random() < 0.3:  # a shadow: one side of a random line darker
        x, y = np.meshgrid(np.arange(width), np.arange(height))
        angle = rng.uniform(0, 2 * math.pi)
        side = (x - rng.uniform(0, width)) * math.cos(angle) + (y - rng.uniform(0, height)) * math.sin(angle) > 0
        out[side] *= rng.uniform(0.35, 0.75)
    if rng.random() < 0.2:  # glare: a bright blob
        x, y = np.meshgrid(np.arange(width), np.arange(height))
        cx, cy, radius = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(0.05, 0.3) * width
        out += (rng.uniform(40, 120) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * radius**2)))[..., None]
    if rng.random() < 0.25:  # dirt: soft dark blots
        dirt = np.zeros((height, width), np.float32)
        for _ in range(int(rng.integers(1, 8))):
            centre = (int(rng.integers(width)), int(rng.integers(height)))
            axes = (max(1, int(rng.uniform(0.01, 0.12) * width)), max(1, int(rng.uniform(0.05, 0.4) * height)))
            cv2.ellipse(dirt, centre, axes, rng.uniform(0, 180), 0, 360, float(rng.uniform(0.2, 0.7)), -1)
        dirt = cv2.GaussianBlur(dirt, (0, 0), max(0.5, 0.01 * width))
        out = out * (1 - dirt[..., None]) + rng.uniform(30, 90) * dirt[..., None]
    gamma = rng.uniform(0.75, 1.35)
    out = 255 * (np.clip(out, 0, 255) / 255) ** gamma
    return np.clip(out, 0, 255).astype(np.uint8)


def _degrade(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Blur, noise and JPEG artefacts at the image's own scale."""
    if rng.random() < 0.6:
        if rng.random() < 0.3:  # motion blur along a random direction
            length = int(rng.integers(2, max(3, image.shape[1] // 40) + 1))
            kernel = np.zeros((length, length), np.float32)
            kernel[length // 2, :] = 1 / length
            rotation = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
            kernel = cv2.warpAffine(kernel, rotation, (length, length))
            image = cv2.filter2D(image, -1, kernel / max(kernel.sum(), 1e-6))
        else:
            image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.3, 0.8 + image.shape[1] / 400))
    if rng.random() < 0.6:
        image = np.clip(image + rng.normal(0, rng.uniform(2, 14), image.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(20, 96))])
        image = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    return image


def to_crop(region: np.ndarray, lines: int = 1, layout: str = "side-by-side") -> np.ndarray:
    """A cut resized to the recognizer's 94x24 as plates.recognition.crops.normalize resizes it, BGR uint8; a
    two-line plate's laid out as `layout` says: side by side in one crop first (as normalize_two_line), or its rows
    apart, 24x188 (rows_apart, as normalize_rows)."""
    if lines == 2 and layout == "rows":
        return rows_apart(region)
    return fit(side_by_side(region) if lines == 2 else region)


def synthetic_crop(
    plate: np.ndarray,
    rng: np.random.Generator,
    backgrounds: list[np.ndarray],
    enlarge_share: float = ENLARGE_SHARE,
    lines: int = 1,
    layout: str = "side-by-side",
) -> np.ndarray:
    """A flat plate (plates.training.synthetic.render_plate) of `lines` rows as the served pipeline would cut it from
    a photo. A plate narrower than type 1's 520 mm (a two-line one) is as much narrower in the frame."""
    plate_h, plate_w = plate.shape[:2]
    width = math.exp(rng.uniform(*np.log(PLATE_WIDTHS))) * plate_w / (PLATE_MM[0] * PIXELS_PER_MM)
    corners = plate_corners((plate_w, plate_h), rng, width)
    box = jitter_box(np.concatenate([corners.min(0), corners.max(0)]), rng)
    # Only the region the cut covers is made, in frame pixels: the box grown as the variant says (crop_bounds).
    variant = random_variant(rng)
    grow = (box[2:] - box[:2]) * [variant.horizontal_margin, variant.vertical_pad]
    origin = np.floor(box[:2] - grow)
    size = tuple(int(v) for v in np.maximum(np.floor(box[2:] + grow) - origin, 2))
    # A small photo rescaled to the frame: the region is made smaller and enlarged back, half the time sharpened.
    # Kept at 30 px wide or more before enlarging: less holds no readable text.
    plate_width = float(corners[:, 0].max() - corners[:, 0].min())
    enlarge = float(rng.uniform(2, max(2.0, min(4.0, plate_width / 30)))) if rng.random() < enlarge_share else 1.0
    small = (max(2, round(size[0] / enlarge)), max(2, round(size[1] / enlarge)))
    target = (corners - origin) * [small[0] / size[0], small[1] / size[1]]
    # Shrink the flat plate near its final size first: a perspective warp samples, it does not average.
    shrink = min(1.0, 2 * (target[:, 0].max() - target[:, 0].min()) / plate_w)
    flat = cv2.resize(plate, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA) if shrink < 1 else plate
    source = np.array([[0, 0], [flat.shape[1], 0], [flat.shape[1], flat.shape[0]], [0, flat.shape[0]]], np.float32)
    homography = cv2.getPerspectiveTransform(source, target.astype(np.float32))
    scene = _background(small, backgrounds, rng)
    cv2.warpPerspective(flat, homography, small, dst=scene, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
    scene = _degrade(_photometric(scene, rng), rng)
    if enlarge > 1:
        scene = cv2.resize(scene, size, interpolation=cv2.INTER_LINEAR)
        scene = sharpen(scene) if rng.random() < 0.5 else scene
    return to_crop(scene, lines, layout)


def _shrunk_cut(
    photo: np.ndarray, box: np.ndarray, plate_width: float, rng: np.random.Generator, cut, lines: int, layout: str
) -> np.ndarray:
    """A real plate `plate_width` px wide in the frame, half the time shrunk (a smaller plate, down to the smallest
    of PLATE_WIDTHS), its box jittered as a detector's, cut by `cut(photo, box, variant)` with a random variant, and
    half the time lit and degraded as synthetic plates are."""
    scale = 1.0
    if rng.random() < 0.5 and plate_width > PLATE_WIDTHS[0]:
        scale = math.exp(rng.uniform(math.log(max(PLATE_WIDTHS[0] / plate_width, 0.25)), 0))
    if scale < 1:
        photo = cv2.resize(photo, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    region = cut(photo, jitter_box(np.asarray(box, np.float32) * scale, rng), random_variant(rng))
    if rng.random() < 0.5:
        # Lit and degraded at no more than 4 times the recognizer's width: the same look once resized to 94x24, at a
        # fraction of the cost for large plates (a 600 px plate took 30 ms).
        if region.shape[1] > 4 * CROP_WIDTH:
            factor = 4 * CROP_WIDTH / region.shape[1]
            region = cv2.resize(region, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
        region = _degrade(_photometric(region, rng), rng)
    return to_crop(region, lines, layout)


def real_crop(
    photo: np.ndarray, box: np.ndarray, rng: np.random.Generator, lines: int = 1, layout: str = "side-by-side"
) -> np.ndarray:
    """A real photo's plate of `lines` rows cut as the served pipeline would cut it (from the photo rescaled to the
    frame), augmented as `_shrunk_cut` says."""
    plate_width = float(box[2] - box[0]) * 1920 / photo.shape[1]
    return _shrunk_cut(
        photo, box, plate_width, rng, lambda image, b, v: cut_crops(image, b[None], [v])[0], lines, layout
    )


# A tight crop of a plate (rfplates/crops) has nothing around it to cut a pad or a margin from: its edges are
# repeated this far (share of its width, of its height), and the plate's box is the crop.
TIGHT_BORDER = (0.15, 0.5)


def tight_as_photo(crop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A tight crop as a photo to cut from: its edges repeated around it, and the plate's box in it."""
    height, width = crop.shape[:2]
    x, y = round(width * TIGHT_BORDER[0]), round(height * TIGHT_BORDER[1])
    photo = cv2.copyMakeBorder(crop, y, y, x, x, cv2.BORDER_REPLICATE)
    return photo, np.array([x, y, x + width, y + height], np.float32)


def tight_crop(crop: np.ndarray, rng: np.random.Generator, lines: int = 1, layout: str = "side-by-side") -> np.ndarray:
    """A tight crop of a plate of `lines` rows cut as the served pipeline cuts a plate of its size in the frame,
    augmented as `_shrunk_cut` says."""
    photo, box = tight_as_photo(crop)
    return _shrunk_cut(photo, box, crop.shape[1], rng, crop_box, lines, layout)
