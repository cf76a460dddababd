"""Synthetic Russian plates drawn with the GOST R 50577-93 typeface: texts in every format the decoder knows, and flat
plate images laid out as the standard lays them out (GOST R 50577-93, type 1 and its kin: 520 x 112 mm), one-line
(STYLES) and two-line (TWO_LINE_STYLES).

A flat plate is drawn at PIXELS_PER_MM; `plates.training.augment` puts it in a scene, bends, degrades and cuts it.
The main field's characters are drawn evenly (every letter and digit as likely as any other in its slot), so the
pairs a recognizer confuses (E/Y, P/Y, 4/5, 0/O, 8/B) are as well represented as any; region codes mostly from those
regions were given (random_region).

Two-line plates are written top row, then bottom row, then the region (H701HE27, 8343AT50): type 1A's text is a
private plate's, and the four digits over two letters of motorcycles and tractors are the military format's, so
`plates.recognition.formats` reads both. Their layouts:
- type 1A, 290 x 170 mm, for cars whose mount cannot take a 520 mm plate: a letter and three digits on top, two
  letters at the lower left, the region framed at the lower right over RUS and the flag;
- motorcycles (type 4; type 8 black, the military's): four digits on top, two letters and the framed region below;
  190 x 145 mm since GOST R 50577-2018, 245 x 160 mm before;
- tractors and other self-propelled machines (type 3; type 7 the military's): the same rows on 245 x 160 mm.
Sources: GOST R 50577 as published at dokipedia.ru/document/5162878 (character heights 58 and 76 mm, strokes 9 and
11 mm; RUS and the flag); studopedia.ru/12_103915_tipi-i-osnovnie-razmeri.html (the types, 1A among them);
consultant.ru/document/cons_doc_LAW_136374/961fc2f21883b2fb7482f01b95f84ba4363627e1 (types 7 and 8);
dzen.ru/a/W6jFborQEACpMkeO and wtfpost.ru/v-2019-godu-avtolyubitelej-v-nashej-strane-zhdut-peremeny (GOST R
50577-2018: 290 x 170 mm square plates, motorcycle plates 190 x 145 mm instead of 245 x 160 mm);
de.zxc.wiki/wiki/Kfz-Kennzeichen_(Russland) and piglix.com/piglix/Vehicle_registration_plates_of_Russia (motorcycle
and tractor plates are two-line: four digits on the first line, two letters at the left of the second, the region
field at its right). None of these gives the tractor plate's size: 245 x 160 mm is the two-line size the standard
used before 2018. Where the rows and the region's frame sit (shares of the plate) was measured on the real two-line
plates of rfplates/scenes (labels/scenes.json, "lines": 2): P825HE55 and C161YP190 (type 1A), 5719KB42 and
9139KA42 (four digits over two letters).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np

from plates.build.paths import shared_dir
from plates.recognition.alphabet import LETTERS
from plates.recognition.regions import REGIONS

DIGITS = "0123456789"
PIXELS_PER_MM = 2.0
PLATE_MM = (520, 112)  # width, height
FONT_PATH = shared_dir() / "fonts" / "GOST-R-50577-93.ttf"

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

Row = tuple[float, float, float, float]  # left, right, baseline, character height: shares of the plate's width, height


@dataclass(frozen=True)
class TwoLineStyle:
    """A two-line plate: `top` across the upper half, `bottom`'s letters at the lower left, the region code framed at
    the lower right; places are shares of the plate's size, measured on real plates (the module's docstring)."""

    top: str  # the top row's template
    bottom: str  # the bottom row's template, left of the region
    sizes_mm: tuple[tuple[int, int], ...]  # width, height: one drawn per plate
    top_row: Row
    bottom_row: Row
    region_box: tuple[float, float, float, float]  # left, top, right, bottom
    top_groups: tuple[int, ...]  # lengths of the top row's groups (a wider gap between them)
    rus_share: float  # of plates with RUS and the flag under the region code (the rest: the code alone, larger)
    black_share: float  # of black plates with white characters (the military's)


TWO_LINE_STYLES: dict[str, TwoLineStyle] = {
    # Type 1A: A 123 / BC 77 RUS, white, with the flag.
    "square": TwoLineStyle(
        "LDDD",
        "LL",
        ((290, 170),),
        (0.04, 0.9, 0.42, 0.34),
        (0.04, 0.53, 0.88, 0.3),
        (0.55, 0.49, 0.985, 0.975),
        (1, 3),
        rus_share=1.0,
        black_share=0.0,
    ),
    # Type 4: 1234 / AB 77, 190 x 145 since GOST R 50577-2018, 245 x 160 before; type 8 is the military's, black.
    "motorcycle": TwoLineStyle(
        "DDDD",
        "LL",
        ((190, 145), (245, 160)),
        (0.05, 0.95, 0.45, 0.36),
        (0.05, 0.54, 0.88, 0.28),
        (0.57, 0.52, 0.985, 0.97),
        (4,),
        rus_share=0.6,
        black_share=0.1,
    ),
    # Type 3, tractors and other self-propelled machines: 1234 / AB 77 on 245 x 160 (type 7: the military's).
    "tractor": TwoLineStyle(
        "DDDD",
        "LL",
        ((245, 160),),
        (0.05, 0.95, 0.44, 0.35),
        (0.05, 0.54, 0.87, 0.26),
        (0.58, 0.54, 0.985, 0.96),
        (4,),
        rus_share=0.3,
        black_share=0.1,
    ),
}
# Nine in ten two-line plates met on cars are type 1A (issue 37); motorcycles' and tractors' still get enough.
TWO_LINE_SHARES = {"square": 0.5, "motorcycle": 0.3, "tractor": 0.2}


# Real plates carry only the codes regions were given, and the recognizers learnt those from them: of the rendered
# one-line plates found in the val scenes, those with a code no region has were read 0.58, the others 0.80
# (docs/scenes.md). The rest keep a code issued later readable.
ISSUED_SHARE = 0.9
ISSUED_CODES = sorted(REGIONS)


def random_region(rng: np.random.Generator) -> str:
    """A region code: ISSUED_SHARE of them one a region was given, each as likely; the rest any code the formats
    accept, two digits or three (the first 1, 7 or 9), every digit evenly drawn."""
    if rng.random() < ISSUED_SHARE:
        return str(rng.choice(ISSUED_CODES))
    if rng.random() < 0.5:
        code = "".join(rng.choice(list(DIGITS), 2))
        return code if code != "00" else "01"
    return str(rng.choice(list("179"))) + "".join(rng.choice(list(DIGITS), 2))


def template(style_name: str) -> str:
    """The characters before the region code of a plate of `style_name`, one line or two (top row first)."""
    if style_name in TWO_LINE_STYLES:
        return TWO_LINE_STYLES[style_name].top + TWO_LINE_STYLES[style_name].bottom
    return STYLES[style_name].template


def lines(style_name: str) -> int:
    """How many rows of characters a plate of `style_name` has."""
    return 2 if style_name in TWO_LINE_STYLES else 1


def random_text(style_name: str, rng: np.random.Generator) -> str:
    """A plate text in format `style_name` (main field, then region), each character drawn evenly in its slot."""
    slot = {"L": LETTERS, "D": DIGITS, "T": "T"}
    return "".join(str(rng.choice(list(slot[c]))) for c in template(style_name)) + random_region(rng)


def _draw(shares: dict[str, float], rng: np.random.Generator) -> str:
    names = list(shares)
    return str(rng.choice(names, p=[shares[n] for n in names]))


def random_format(rng: np.random.Generator) -> str:
    """A one-line style, as often as FORMAT_SHARES says."""
    return _draw(FORMAT_SHARES, rng)


def random_two_line_format(rng: np.random.Generator) -> str:
    """A two-line style, as often as TWO_LINE_SHARES says."""
    return _draw(TWO_LINE_SHARES, rng)


@functools.cache
def _font(size: int):
    from PIL import ImageFont

    if not FONT_PATH.is_file():
        raise FileNotFoundError(f"the plate typeface {FONT_PATH} is missing: set PLATES_SHARED_DIR to its folder")
    return ImageFont.truetype(str(FONT_PATH), size)


@functools.cache
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


def _line(
    mask: np.ndarray,
    chars: str,
    heights: list[float],
    left: float,
    right: float,
    bottom: float,
    gaps: list[float],
    squeeze: float,
) -> None:
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
    variations real plates and their photos show (stroke weight, spacing, wear of the paint). A two-line style's plate
    is its own size (TwoLineStyle.sizes_mm) at PIXELS_PER_MM."""
    if style_name in TWO_LINE_STYLES:
        return _render_two_line(text, TWO_LINE_STYLES[style_name], rng)
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
    _line(
        mask,
        region,
        [region_mm * scale] * len(region),
        separator + 5 * scale,
        width - 8 * scale,
        (8 + region_mm) * scale,
        [rng.uniform(2, 6) * scale] * (len(region) - 1),
        squeeze,
    )
    _line(
        mask,
        "RUS",
        [rng.uniform(14, 20) * scale] * 3,
        separator + 8 * scale,
        width - 40 * scale,
        102 * scale,
        [2 * scale] * 2,
        1.0,
    )
    mask = _vary_strokes(mask, rng)
    # The frame: the plate's rim, a separator before the region, and the region's flag as a tinted band.
    frame = np.zeros_like(mask)
    cv2.rectangle(frame, (3, 3), (width - 4, height - 4), 1.0, max(2, round(2.5 * scale)))
    cv2.line(frame, (round(separator), 6), (round(separator), height - 6), 1.0, max(1, round(1.5 * scale)))
    plate = _paint(np.maximum(mask, frame), style.background, style.ink, rng)
    _flag(plate, round(width - 36 * scale), 86 * scale, round(24 * scale), 4.5 * scale)
    return np.clip(plate, 0, 255).astype(np.uint8)


def _vary_strokes(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The characters' strokes thickened or thinned by a pixel or two."""
    # GOST R 50577 strokes are 9 mm (58 mm characters) to 11 mm (76 mm): the font's. Squeezed into the field they
    # come out thinner, so they are thickened as often as thinned; the first recognizer's plates, thinned more
    # often, had region digits thinner than real ones (docs/recognizer.md).
    stroke = int(rng.integers(-2, 4))
    if stroke:
        kernel = np.ones((abs(stroke) + 1,) * 2, np.uint8)
        mask = (cv2.dilate if stroke > 0 else cv2.erode)(mask, kernel)
    return mask


def _paint(
    mask: np.ndarray, background: tuple[int, int, int], ink: tuple[int, int, int], rng: np.random.Generator
) -> np.ndarray:
    """The plate's colours on `mask` (1: ink), float BGR, the background's brightness varied."""
    paper = np.array(background, np.float32) * rng.uniform(0.8, 1.05)
    return paper * (1 - mask[..., None]) + np.array(ink, np.float32) * mask[..., None]


def _flag(plate: np.ndarray, left: int, top: float, width: int, stripe: float) -> None:
    """The Russian flag's three stripes (white, blue, red), each `stripe` pixels tall, drawn into `plate`."""
    for number, colour in enumerate((WHITE, (150, 60, 20), (40, 40, 190))):
        y0 = round(top + number * stripe)
        plate[y0 : y0 + round(stripe), left : left + width] = colour


def _render_two_line(text: str, style: TwoLineStyle, rng: np.random.Generator) -> np.ndarray:
    scale = PIXELS_PER_MM
    width_mm, height_mm = style.sizes_mm[int(rng.integers(len(style.sizes_mm)))]
    width, height = round(width_mm * scale), round(height_mm * scale)
    top, bottom = text[: len(style.top)], text[len(style.top) : len(style.top) + len(style.bottom)]
    region = text[len(style.top) + len(style.bottom) :]
    mask = np.zeros((height, width), np.float32)
    squeeze = rng.uniform(0.85, 1.1)
    gap = rng.uniform(0.01, 0.03) * width

    def row(chars: str, place: Row, groups: tuple[int, ...], group_gap: float) -> None:
        left, right, baseline, size = place
        digit = size * height * rng.uniform(0.93, 1.05)
        # Letters stand a little shorter than digits, as on type 1 (58 mm to 76 mm) but less so.
        heights = [digit * (rng.uniform(0.85, 1.0) if c in LETTERS else 1.0) for c in chars]
        bounds = np.cumsum(groups)[:-1]
        gaps = [group_gap if i + 1 in bounds else gap for i in range(len(chars) - 1)]
        _line(
            mask,
            chars,
            heights,
            left * width,
            right * width,
            (baseline + rng.uniform(-0.015, 0.015)) * height,
            gaps,
            squeeze,
        )

    row(top, style.top_row, style.top_groups, rng.uniform(0.1, 0.2) * width)
    row(bottom, style.bottom_row, (len(bottom),), gap)
    left, upper, right, lower = (v * s for v, s in zip(style.region_box, (width, height, width, height)))
    box_height = lower - upper
    rus = rng.random() < style.rus_share
    # With RUS beneath, the code takes the upper 55 % of its frame; alone, 70 % of it.
    code_top, code_bottom = (0.12, 0.66) if rus else (0.15, 0.85)
    code = (code_bottom - code_top) * box_height * rng.uniform(0.92, 1.03)
    _line(
        mask,
        region,
        [code] * len(region),
        left + 0.04 * width,
        right - 0.03 * width,
        upper + code_bottom * box_height,
        [rng.uniform(0.005, 0.02) * width] * (len(region) - 1),
        squeeze,
    )
    flag_width = 0.3 * (right - left)
    if rus:
        _line(
            mask,
            "RUS",
            [0.12 * box_height] * 3,
            left + 0.08 * width,
            right - flag_width - 0.04 * width,
            upper + 0.9 * box_height,
            [0.01 * width] * 2,
            1.0,
        )
    mask = _vary_strokes(mask, rng)
    frame = np.zeros_like(mask)
    rim = max(2, round(0.008 * width))
    cv2.rectangle(frame, (3, 3), (width - 4, height - 4), 1.0, rim)
    cv2.rectangle(frame, (round(left), round(upper)), (round(right), round(lower)), 1.0, max(1, round(0.006 * width)))
    black = rng.random() < style.black_share
    background, ink = (BLACK, WHITE) if black else (WHITE, BLACK)
    plate = _paint(np.maximum(mask, frame), background, ink, rng)
    if rus and not black:
        stripe = 0.055 * box_height
        _flag(
            plate,
            round(right - flag_width - 0.02 * width),
            upper + 0.9 * box_height - 3 * stripe,
            round(flag_width),
            stripe,
        )
    return np.clip(plate, 0, 255).astype(np.uint8)
