"""Plates read by eye: the sheets a person reads them from, the lines they type, and the label files they become.

A person (or a helper) reads each plate from an enlarged picture of it, with no text beside it, and types one line
per tile of a sheet:

    c0012 A001PY177            every character certain
    c0013 doubt A0?1PY17?      some character in doubt: '?' where it is (never trained on)
    c0014 illegible            too small, blurred, dirty or cut to read
    c0015 foreign              not a Russian registration plate (another country's, a vanity or dealer plate)
    c0016 notplate             the box holds no plate
    c0017 twoline 1234AB50     a two-line plate, top row first; `twoline doubt 12?4AB50` where in doubt

Texts are written with the Latin look-alikes of the plate letters (ABEKMHOPCTYX). A reading made without a hint is
then compared with the hint the data came with (a file name's text) and with what the recognizers read: where they
differ, the plate is looked at again, larger (`dispute_sheet`). Labels live in the repository (labels/), keyed by
photo and box, never by tile number, so the sheets can be made again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import cv2
import numpy as np

from plates.recognition.alphabet import ALPHABET
from plates.recognition.formats import is_valid_plate

STATUSES = ("read", "doubt", "illegible", "foreign", "notplate")
TILE_WIDTH, TILE_HEIGHT = 500, 150  # a sheet is 2 tiles across, 8 down: 1000 x 1200, legible when shown whole
TILES_PER_SHEET = 16
MAX_ENLARGE = 8.0  # a 20 px plate shown 160 px wide: larger shows no more
MARGIN = (0.15, 0.35)  # of a scene box's width and height shown around it: a loose box still shows the whole plate
_CYRILLIC = str.maketrans("АВЕКМНОРСТУХ", "ABEKMHOPCTYX")


@dataclass(frozen=True)
class Tile:
    id: str  # the tile's name on its sheet: a source letter and a number
    image: str  # the photo, relative to the data folder (../shared/data)
    box: tuple[float, float, float, float] | None  # x1, y1, x2, y2 in its pixels; None: the whole image is the plate


@dataclass(frozen=True)
class Label:
    image: str
    box: tuple[float, float, float, float] | None
    status: str  # one of STATUSES
    text: str | None = None  # the plate's text where status is "read" (or "doubt": with '?' where in doubt)
    lines: int = 1  # 2 for a two-line plate (its text is the top row, then the bottom one)

    @property
    def key(self) -> tuple[str, tuple[float, ...] | None]:
        return self.image, self.box

    @property
    def trainable(self) -> bool:
        return self.status == "read"


class ReadingError(ValueError):
    """A typed line that is not one of the forms above."""


def parse_line(line: str) -> tuple[str, str, str | None, int] | None:
    """One typed line as (tile id, status, text, lines); None for a blank or comment line."""
    words = line.split("#", 1)[0].split()
    if not words:
        return None
    tile, rest = words[0], [w.upper().translate(_CYRILLIC) if i else w for i, w in enumerate(words[1:], 1)]
    lines = 1
    if rest and rest[0].lower() == "twoline":
        lines, rest = 2, rest[1:]
    status = "read"
    if rest and rest[0].lower() in STATUSES:
        status, rest = rest[0].lower(), rest[1:]
    text = rest[0] if rest else None
    if len(rest) > 1:
        raise ReadingError(f"{tile}: one text, with no spaces, after the status: {line.strip()!r}")
    if status == "read":
        if text is None:
            raise ReadingError(f"{tile}: a text, or one of {', '.join(STATUSES[1:])}: {line.strip()!r}")
        if not is_valid_plate(text):
            raise ReadingError(f"{tile}: {text} is no Russian plate format: type it as doubt or foreign")
    elif status == "doubt":
        if text is None or "?" not in text or any(c not in ALPHABET + "?" for c in text):
            raise ReadingError(f"{tile}: doubt takes the text with '?' for each character in doubt: {line.strip()!r}")
    elif text is not None:
        raise ReadingError(f"{tile}: {status} takes no text: {line.strip()!r}")
    return tile, status, text, lines


def parse_readings(text: str, tiles: dict[str, Tile]) -> list[Label]:
    """The labels of a typed sheet (or several): every line parsed, each tile read once."""
    labels: dict[str, Label] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        parsed = parse_line(line)
        if parsed is None:
            continue
        tile_id, status, plate_text, lines = parsed
        if tile_id not in tiles:
            raise ReadingError(f"line {number}: no tile {tile_id}")
        if tile_id in labels:
            raise ReadingError(f"line {number}: {tile_id} read twice")
        tile = tiles[tile_id]
        labels[tile_id] = Label(tile.image, tile.box, status, plate_text, lines)
    return list(labels.values())


# ----------------------------------------------------------------------------------------------------- pictures


def plate_picture(photo: np.ndarray, box: Sequence[float] | None, width: int, height: int) -> np.ndarray:
    """The plate of `box` (with MARGIN around it), or the whole image, enlarged or shrunk to fit width x height."""
    if box is not None:
        x1, y1, x2, y2 = box
        dx, dy = (x2 - x1) * MARGIN[0], (y2 - y1) * MARGIN[1]
        left, top = max(0, int(x1 - dx)), max(0, int(y1 - dy))
        right, bottom = min(photo.shape[1], int(np.ceil(x2 + dx))), min(photo.shape[0], int(np.ceil(y2 + dy)))
        photo = photo[top : max(bottom, top + 1), left : max(right, left + 1)]
    scale = min(width / photo.shape[1], height / photo.shape[0], MAX_ENLARGE)
    size = (max(1, round(photo.shape[1] * scale)), max(1, round(photo.shape[0] * scale)))
    return cv2.resize(photo, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)


def sheet(tiles: Sequence[Tile], data_dir: Path, captions: dict[str, str] | None = None) -> np.ndarray:
    """A sheet of up to TILES_PER_SHEET plates, 2 across, each under its tile id (and its caption, if given)."""
    columns, rows = 2, -(-len(tiles) // 2)
    picture = np.full((rows * TILE_HEIGHT, columns * TILE_WIDTH, 3), 255, np.uint8)
    photos: dict[str, np.ndarray] = {}
    for index, tile in enumerate(tiles):
        if tile.image not in photos:
            photos[tile.image] = cv2.imread(str(data_dir / tile.image), cv2.IMREAD_COLOR)
        plate = plate_picture(photos[tile.image], tile.box, TILE_WIDTH - 20, TILE_HEIGHT - 32)
        row, column = divmod(index, columns)
        x, y = column * TILE_WIDTH + 10, row * TILE_HEIGHT + 27
        picture[y : y + plate.shape[0], x : x + plate.shape[1]] = plate
        caption = tile.id + (f"   {captions[tile.id]}" if captions and tile.id in captions else "")
        cv2.putText(picture, caption, (x, y - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 220), 2, cv2.LINE_AA)
        cv2.rectangle(
            picture,
            (column * TILE_WIDTH, row * TILE_HEIGHT),
            ((column + 1) * TILE_WIDTH - 1, (row + 1) * TILE_HEIGHT - 1),
            (200, 200, 200),
            1,
        )
    return picture


def dispute_picture(tile: Tile, data_dir: Path, options: Sequence[str], width: int = 1000) -> np.ndarray:
    """One plate, large, its region block (the right 38 %) larger beside it, and beneath them the tile id and the
    texts in dispute, numbered, with no word of where each came from: what a second look decides between."""
    photo = cv2.imread(str(data_dir / tile.image), cv2.IMREAD_COLOR)
    plate = plate_picture(photo, tile.box, int(width * 0.64), 200)
    region = plate_picture(plate[:, int(plate.shape[1] * 0.62) :], None, int(width * 0.33), 200)
    picture = np.full((200 + 45, width, 3), 255, np.uint8)
    picture[: plate.shape[0], : plate.shape[1]] = plate
    picture[: region.shape[0], width - region.shape[1] :] = region
    caption = "   ".join([tile.id] + [f"{number}) {option}" for number, option in enumerate(options, start=1)])
    cv2.putText(picture, caption, (10, 232), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 220), 2, cv2.LINE_AA)
    cv2.line(picture, (0, 244), (width, 244), (160, 160, 160), 1)
    return picture


# ---------------------------------------------------------------------------------------------------- the tiles


def yolo_tiles(prefix: str, photos: Iterable[tuple[Path, list[tuple[float, ...]]]], data_dir: Path) -> list[Tile]:
    """A tile per box of each (photo, boxes), numbered in order."""
    tiles = []
    for photo, boxes in photos:
        image = str(Path(photo).resolve().relative_to(data_dir.resolve()))
        for box in boxes:
            tiles.append(Tile(f"{prefix}{len(tiles):04d}", image, tuple(round(float(v), 2) for v in box)))
    return tiles


def crop_tiles(prefix: str, manifest: Path, data_dir: Path) -> list[Tile]:
    """A tile per crop of a crops manifest ([{"image": ..., "text": ...}], paths relative to its folder)."""
    entries = json.loads(Path(manifest).read_text())
    folder = Path(manifest).parent.resolve().relative_to(data_dir.resolve())
    return [Tile(f"{prefix}{number:04d}", str(folder / entry["image"]), None) for number, entry in enumerate(entries)]


# ---------------------------------------------------------------------------------------------------- the files


def save_labels(labels: Iterable[Label], path: Path, about: dict) -> None:
    """A label file: what it is (`about`: source, licence, method) and its labels, in the order given."""
    rows = []
    for label in labels:
        row = asdict(label)
        row["box"] = None if label.box is None else list(label.box)
        rows.append({k: v for k, v in row.items() if v is not None and (k != "lines" or v != 1)})
    body = ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
    Path(path).write_text(json.dumps(about, ensure_ascii=False, indent=1)[:-2] + ',\n "labels": [\n' + body + "\n]}\n")


def load_labels(path: Path) -> list[Label]:
    document = json.loads(Path(path).read_text())
    labels = []
    for number, row in enumerate(document["labels"]):
        if row.get("status") not in STATUSES:
            raise ReadingError(
                f"{path} label {number}: status must be one of {', '.join(STATUSES)}, got {row.get('status')!r}"
            )
        box = None if row.get("box") is None else tuple(float(v) for v in row["box"])
        labels.append(Label(row["image"], box, row["status"], row.get("text"), int(row.get("lines", 1))))
    return labels


def hint_of_crop(name: str) -> str:
    """The text an rfplates crop's file name carries (`B605BY-197_bmp.rf....jpg` -> B605BY197), unchecked."""
    return re.sub(r"[^0-9A-Z]", "", Path(name).name.split("_", 1)[0].upper())
