"""Synthetic Russian plates drawn with the GOST R 50577-93 typeface: texts in every format the decoder knows, and flat
plate images laid out as the standard lays them out (GOST R 50577-93, type 1 and its kin: 520 x 112 mm).

A flat plate is drawn at PIXELS_PER_MM; `plates.training.augment` puts it in a scene, bends, degrades and cuts it.
Characters are drawn evenly (every letter and digit as likely as any other in its slot), so the pairs a recognizer
confuses (E/Y, P/Y, 4/5, 0/O, 8/B) are as well represented as any.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from plates.recognition.alphabet import LETTERS

DIGITS = "0123456789"
PIXELS_PER_MM = 2.0
PLATE_MM = (520, 112)  # width, height
FONT_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "fonts" / "GOST-R-50577-93.ttf"

# Per format: the main field's template (L a letter, D a digit, T the letter T), where its groups split (wider gaps),
# and its colours (background, ink) as BGR. Taxis and public transport are yellow, police blue, the military black,
# diplomatic red; the share each format gets of the synthetic set is in FORMAT_SHARES.
WHITE, BLACK, YELLOW, BLUE, RED = (235, 235, 235), (20, 20, 20), (40, 200, 235), (150, 70, 20), (40, 40, 190)


@dataclass(frozen=True)
class PlateStyle:
    template: str
    groups: tuple[int, ...]  # lengths of the character groups of the main field
    background: tuple[int, int, int]
    ink: tuple[int, int, int]


STYLES: dict[str, PlateStyle] = {
    "private": PlateStyle("LDDDLL", (1, 3, 2), WHITE, BLACK),
    "taxi": PlateStyle("LLDDD", (2, 3), YELLOW, BLACK),
    "trailer": PlateStyle("LLDDDD", (2, 4), WHITE, BLACK),
    "police": PlateStyle("LDDDD", (1, 4), BLUE, WHITE),
    "military": PlateStyle("DDDDLL", (4, 2), BLACK, WHITE),
    "diplomatic": PlateStyle("DDDTDDD", (3, 1, 3), RED, WHITE),
}
# Private plates are most of what the service meets; every other format still gets enough to be learnt.
FORMAT_SHARES = {"private": 0.5, "taxi": 0.1, "trailer": 0.1, "police": 0.1, "military": 0.1, "diplomatic": 0.1}


def random_region(rng: np.random.Generator) -> str:
    """A region code the formats accept, two digits or three (the first 1, 7 or 9), every digit evenly drawn."""
    if rng.random() < 0.5:
        code = "".join(rng.choice(list(DIGITS), 2))
        return code if code != "00" else "01"
    return str(rng.choice(list("179"))) + "".join(rng.choice(list(DIGITS), 2))


def random_text(style_name: str, rng: np.random.Generator) -> str:
    """A plate text in format `style_name` (main field, then region), each character drawn evenly in its slot."""
    slot = {"L": LETTERS, "D": DIGITS, "T": "T"}
    return "".join(str(rng.choice(list(slot[c]))) for c in STYLES[style_name].template) + random_region(rng)


def random_format(rng: np.random.Generator) -> str:
    names = list(FORMAT_SHARES)
    return str(rng.choice(names, p=[FORMAT_SHARES[n] for n in names]))


@functools.lru_cache(maxsize=None)
def _font(size: int):
    from PIL import ImageFont

    if not FONT_PATH.is_file():
        raise FileNotFoundError(f"the plate typeface {FONT_PATH} is missing: it comes with ../shared/fonts")
    return ImageFont.truetype(str(FONT_PATH), size)


@functools.lru_cache(maxsize=None)
def glyph(char: str, height_px: int) -> np.ndarray:
    """The ink of `char` as a float32 mask cropped to its ink, `height_px` tall (letters and digits alike: the
    caller picks the height of the class)."""
    from PIL import Image, ImageDraw

    font = _font(200)
    left, top, right, bottom = font.getbbox(char)
    canvas = Image.new("L", (right - left + 20, bottom - top + 20), 0)
    ImageDraw.Draw(canvas).text((10 - left, 10 - top), char, font=font, fill=255)
    ink = np.asarray(canvas)
    rows, cols = np.nonzero(ink)
    ink = ink[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    width = max(1, round(ink.shape[1] * height_px / ink.shape[0]))
    return cv2.resize(ink, (width, height_px), interpolation=cv2.INTER_AREA).astype(np.float32) / 255


def _place(mask: np.ndarray, ink: np.ndarray, left: float, top: float, width: float) -> None:
    """Draw `ink` into `mask` with its top-left corner at (left, top), squeezed to `width` pixels."""
    ink = cv2.resize(ink, (max(1, round(width)), ink.shape[0]), interpolation=cv2.INTER_AREA)
    x, y = round(left), round(top)
    region = mask[y : y + ink.shape[0], x : x + ink.shape[1]]
    np.maximum(region, ink[: region.shape[0], : region.shape[1]], out=region)


def _line(mask: np.ndarray, chars: str, heights: list[float], left: float, right: float, bottom: float,
          gaps: list[float], squeeze: float) -> None:
    """Characters bottom-aligned on `bottom`, spread from `left` to at most `right`, squeezed to fit."""
    inks = [glyph(c, max(2, round(h))) for c, h in zip(chars, heights)]
    widths = [ink.shape[1] * squeeze for ink in inks]
    natural = sum(widths) + sum(gaps)
    fit = min(1.0, (right - left) / natural)
    x = left + ((right - left) - natural * fit) / 2
    for ink, width, gap in zip(inks, widths, gaps + [0.0]):
        _place(mask, ink, x, bottom - ink.shape[0], width * fit)
        x += (width + gap) * fit


def render_plate(text: str, style_name: str, rng: np.random.Generator) -> np.ndarray:
    """The flat plate of `text` in format `style_name`: BGR uint8, PLATE_MM at PIXELS_PER_MM, with the small
    variations real plates and their photos show (stroke weight, spacing, wear of the paint)."""
    style = STYLES[style_name]
    scale = PIXELS_PER_MM
    width, height = (round(v * scale) for v in PLATE_MM)
    main, region = text[: len(style.template)], text[len(style.template) :]
    mask = np.zeros((height, width), np.float32)
    squeeze = rng.uniform(0.85, 1.1)
    digit_mm, letter_mm = 76 * rng.uniform(0.93, 1.05), 58 * rng.uniform(0.93, 1.05)
    heights = [(letter_mm if c in LETTERS else digit_mm) * scale for c in main]
    gap, group_gap = rng.uniform(3, 9) * scale, rng.uniform(8, 18) * scale
    bounds = np.cumsum(style.groups)[:-1]
    gaps = [group_gap if i + 1 in bounds else gap for i in range(len(main) - 1)]
    separator = rng.uniform(392, 408) * scale
    _line(mask, main, heights, 12 * scale, separator - 6 * scale, rng.uniform(92, 98) * scale, gaps, squeeze)
    region_mm = 58 * rng.uniform(0.9, 1.05) * (0.95 if len(region) == 3 else 1.0)
    _line(mask, region, [region_mm * scale] * len(region), separator + 5 * scale, width - 8 * scale,
          (8 + region_mm) * scale, [rng.uniform(2, 6) * scale] * (len(region) - 1), squeeze)
    _line(mask, "RUS", [rng.uniform(14, 20) * scale] * 3, separator + 8 * scale, width - 40 * scale, 102 * scale,
          [2 * scale] * 2, 1.0)
    # GOST R 50577 strokes are 9 mm (58 mm characters) to 11 mm (76 mm): the font's. Squeezed into the field they
    # come out thinner, so they are thickened as often as thinned; the first recognizer's plates, thinned more
    # often, had region digits thinner than real ones (docs/recognizer.md).
    stroke = int(rng.integers(-2, 4))
    if stroke:
        kernel = np.ones((abs(stroke) + 1,) * 2, np.uint8)
        mask = (cv2.dilate if stroke > 0 else cv2.erode)(mask, kernel)
    # The frame: the plate's rim, a separator before the region, and the region's flag as a tinted band.
    frame = np.zeros_like(mask)
    cv2.rectangle(frame, (3, 3), (width - 4, height - 4), 1.0, max(2, round(2.5 * scale)))
    cv2.line(frame, (round(separator), 6), (round(separator), height - 6), 1.0, max(1, round(1.5 * scale)))
    mask = np.maximum(mask, frame)
    background = np.array(style.background, np.float32) * rng.uniform(0.8, 1.05)
    ink = np.array(style.ink, np.float32)
    plate = background * (1 - mask[..., None]) + ink * mask[..., None]
    flag_x = round(width - 36 * scale)
    for stripe, colour in enumerate((WHITE, (150, 60, 20), (40, 40, 190))):
        y0 = round((86 + stripe * 4.5) * scale)
        plate[y0 : y0 + round(4.5 * scale), flag_x : flag_x + round(24 * scale)] = colour
    return np.clip(plate, 0, 255).astype(np.uint8)
