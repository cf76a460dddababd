"""The recognizer's training and validation sets as arrays: 94x24 BGR uint8 crops (what the served pipeline
normalizes) with their texts; in a set of two-line plates read with their rows apart, 24x188: each crop's rows left
to right, a one-line crop's in the left half. Synthetic crops are drawn per index from a seeded generator, so a set
is the same whichever process draws which part of it.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.recognition.alphabet import ALPHABET
from plates.recognition.crops import CROP_WIDTH, CropVariant, crop_box, cut_crops, scale_pixels
from plates.recognition.formats import plate_format
from plates.training.augment import ENLARGE_SHARE, real_crop, synthetic_crop, tight_as_photo, tight_crop, to_crop
from plates.training.real_plates import RealPlate, training_photos
from plates.training.stacked import KINDS, Stack, restacked
from plates.training.synthetic import lines, random_format, random_text, random_two_line_format, render_plate

_INDEX = {char: index for index, char in enumerate(ALPHABET)}
BACKGROUND_SIDE = 960  # background photos are kept at most this large: enough texture, little memory


@dataclass
class CropSet:
    images: np.ndarray  # [N, 24, 94, 3] uint8 BGR; [N, 24, 188, 3] where two-line plates' rows are apart
    texts: list[str]
    lines: np.ndarray | None = None  # [N] int, each crop's rows of 94x24 (None: one each)

    def __post_init__(self) -> None:
        if self.lines is None:
            self.lines = np.ones(len(self.texts), np.int64)

    def __len__(self) -> int:
        return len(self.texts)

    def save(self, path: Path) -> None:
        np.savez(path, images=self.images, texts=np.array(self.texts), lines=self.lines)

    @classmethod
    def load(cls, path: Path) -> CropSet:
        with np.load(path) as data:
            return cls(data["images"], [str(t) for t in data["texts"]], data["lines"] if "lines" in data else None)

    @classmethod
    def of(cls, crops: list[np.ndarray], texts: list[str]) -> CropSet:
        """Crops of one row (94 px wide) or two apart (188 px) as a set, one-line crops padded to the widest."""
        return cls(widened(np.stack, crops), texts, np.array([crop.shape[1] // CROP_WIDTH for crop in crops]))

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray]:
        return self.images[rows], [self.texts[i] for i in rows], self.lines[rows]


def widened(join, arrays: list[np.ndarray]) -> np.ndarray:
    """`join` (np.stack, np.concatenate) of crops or sets of crops, each padded on its right to the widest."""
    width = max(array.shape[-2] for array in arrays)
    pad = [[(0, 0)] * (array.ndim - 2) + [(0, width - array.shape[-2]), (0, 0)] for array in arrays]
    return join([np.pad(array, p) if p[-2][1] else array for array, p in zip(arrays, pad)])


def mixed(sets: list[CropSet], seed: int) -> CropSet:
    """The sets' crops together in one seeded order, so that any run of them (an epoch's turn) holds each set's
    share."""
    images = widened(np.concatenate, [data.images for data in sets])
    texts = [text for data in sets for text in data.texts]
    lines = np.concatenate([data.lines for data in sets])
    order = np.random.default_rng(seed).permutation(len(texts))
    return CropSet(images[order], [texts[i] for i in order], lines[order])


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """[N, 24, 94, 3] BGR uint8 to the recognizer's input, as plates.recognition.crops.normalize makes it."""
    return torch.from_numpy(np.ascontiguousarray(scale_pixels(images).transpose(0, 3, 1, 2)))


def encode(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """CTC targets: the texts' class indices concatenated, and their lengths."""
    targets = [_INDEX[c] for text in texts for c in text]
    return torch.tensor(targets, dtype=torch.long), torch.tensor([len(t) for t in texts], dtype=torch.long)


def background_photos(detect_dir: Path, e2e_manifest: Path, limit: int = 80) -> list[np.ndarray]:
    """Scenery for synthetic plates: the training photos (never a held-out one), shrunk, plates left in: a plate
    behind a plate is what a loose box shows."""
    photos = []
    for photo, _ in training_photos(detect_dir, e2e_manifest):
        image = cv2.imread(str(photo))
        scale = min(1.0, BACKGROUND_SIDE / max(image.shape[:2]))
        photos.append(cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA))
        if len(photos) == limit:
            break
    return photos


_BACKGROUNDS: list[np.ndarray] = []  # each worker's copy (set before forking, or by _init_worker)


def _init_worker(backgrounds: list[np.ndarray]) -> None:
    _BACKGROUNDS[:] = backgrounds


# Of synthetic plates, the two-line ones (read with their rows side by side): few on the road, but nothing else
# teaches the recognizer their look.
TWO_LINE_SHARE = 0.15


def synthetic_sample(
    seed: int,
    index: int,
    enlarge_share: float = ENLARGE_SHARE,
    layout: str = "side-by-side",
    two_line_share: float = TWO_LINE_SHARE,
) -> tuple[np.ndarray, str]:
    rng = np.random.default_rng([seed, index])
    style = random_two_line_format(rng) if rng.random() < two_line_share else random_format(rng)
    text = random_text(style, rng)
    plate = render_plate(text, style, rng)
    return synthetic_crop(plate, rng, _BACKGROUNDS, enlarge_share, lines(style), layout), text


def _synthetic_chunk(args: tuple[int, int, int, float, str, float]) -> list[tuple[np.ndarray, str]]:
    seed, start, stop, enlarge_share, layout, two_line_share = args
    return [synthetic_sample(seed, index, enlarge_share, layout, two_line_share) for index in range(start, stop)]


def synthetic_set(
    count: int,
    seed: int,
    backgrounds: list[np.ndarray],
    processes: int = 2,
    enlarge_share: float = ENLARGE_SHARE,
    layout: str = "side-by-side",
    two_line_share: float = TWO_LINE_SHARE,
) -> CropSet:
    """`count` synthetic crops, sample i drawn from generator (seed, i), `two_line_share` of them two-line plates
    laid out as `layout` (plates.recognition.crops.TWO_LINE_LAYOUTS) says."""
    _init_worker(backgrounds)
    chunks = [
        (seed, start, min(start + 500, count), enlarge_share, layout, two_line_share) for start in range(0, count, 500)
    ]
    if processes > 1:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_synthetic_chunk, chunks)
    else:
        parts = [_synthetic_chunk(chunk) for chunk in chunks]
    samples = [sample for part in parts for sample in part]
    return CropSet.of([image for image, _ in samples], [text for _, text in samples])


# How a plate is cut when it is read as served, unaugmented: yolo's first cut (pad 0.1, margin 0.03).
SERVED_CUT = CropVariant(0.1, 0.03)


def served_cut(
    image: np.ndarray, box: tuple[float, ...] | None, lines: int = 1, layout: str = "side-by-side"
) -> np.ndarray:
    """The plate cut as the served pipeline's first look cuts it; `box` None: `image` is a tight crop of it."""
    if box is None:
        photo, tight = tight_as_photo(image)
        return to_crop(crop_box(photo, tight, SERVED_CUT), lines, layout)
    return to_crop(cut_crops(image, np.array([box], np.float32), [SERVED_CUT])[0], lines, layout)


def real_set(
    plates: list[RealPlate], per_plate: int, seed: int, augment: bool = True, layout: str = "side-by-side"
) -> CropSet:
    """Each plate cut `per_plate` times with random boxes, variants and looks (or once, as served, unaugmented);
    two-line plates laid out as `layout` says."""
    images, texts = [], []
    by_photo: dict[str, list[RealPlate]] = {}
    for plate in plates:
        by_photo.setdefault(plate.image, []).append(plate)
    for number, (photo, its_plates) in enumerate(sorted(by_photo.items())):
        image = cv2.imread(photo)
        rng = np.random.default_rng([seed, number])
        for plate in its_plates:
            if not augment:
                images.append(served_cut(image, plate.box, plate.lines, layout))
            elif plate.box is None:
                images += [tight_crop(image, rng, plate.lines, layout) for _ in range(per_plate)]
            else:
                box = np.array(plate.box, np.float32)
                images += [real_crop(image, box, rng, plate.lines, layout) for _ in range(per_plate)]
            texts += [plate.text] * (per_plate if augment else 1)
    return CropSet.of(images, texts)


def stacked_plates(plates: list[RealPlate], seed: int) -> list[Stack]:
    """The one-line private plates of `plates` that can be parted, each restacked as the two-line plates its
    characters make (plates.training.stacked.restacked, drawn from generator (seed, i) for the i-th plate): its
    pixels from its box, or the whole of a tight crop."""
    stacked = []
    for number, plate in enumerate(plates):
        if plate.lines != 1 or plate_format(plate.text) != "private":
            continue
        image = cv2.imread(plate.image)
        pixels = image if plate.box is None else crop_box(image, np.array(plate.box, np.float32), CropVariant(0.0))
        stacked += restacked(pixels, plate.text, np.random.default_rng([seed, number]))
    return stacked


def stacked_set(
    plates: list[RealPlate],
    per_plate: int,
    seed: int,
    augment: bool = True,
    layout: str = "rows",
    kinds: tuple[str, ...] = KINDS,
) -> CropSet:
    """stacked_plates of `kinds` as two-line crops laid out as `layout` says: each cut `per_plate` times as a tight
    crop is, with random boxes, variants and looks (or once, as served, unaugmented)."""
    images, texts = [], []
    stacks = [stack for stack in stacked_plates(plates, seed) if stack.kind in kinds]
    for number, stack in enumerate(stacks):
        rng = np.random.default_rng([seed, number, 1])  # not the stream that drew the stack
        if augment:
            images += [tight_crop(stack.pixels, rng, 2, layout) for _ in range(per_plate)]
        else:
            images.append(served_cut(stack.pixels, None, 2, layout))
        texts += [stack.text] * (per_plate if augment else 1)
    return CropSet.of(images, texts)
