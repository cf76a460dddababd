"""The plate detector: an Ultralytics YOLO model, and what comes before and after it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from plates.detection.onnx_detector import OnnxDetector

if TYPE_CHECKING:
    from plates.detection.torch_detector import TorchDetector

# Ultralytics checks for updates and fonts online unless told not to; the service must never reach out.
os.environ.setdefault("YOLO_OFFLINE", "1")

# Boxes smaller than this on either side hold no readable plate; they are detector noise.
MIN_BOX_SIDE = 2.0
# A box whose area lies this much inside a likelier box is a part of that plate: plates do not nest, but the detector
# boxes a close-up's region block or one row of it beside the whole plate.
PART_INSIDE = 0.8
# Two one-line boxes are the two rows of one square plate where one lies on the other (they overlap, or the gap between
# them is under this share of their mean height), they cover the same width (what they share, at least ROWS_SPAN of
# the wider one) and together they are shaped as a two-line plate, at most TWO_LINE_WIDEST times as wide as tall
# (type 1A is 1.7, a loosely boxed one 1.2 to 2; a one-line plate with a line of text under it, 2.3 or more).
ROWS_GAP = 0.25
ROWS_SPAN = 0.8
TWO_LINE_WIDEST = 2.0
# The gray Ultralytics pads a letterboxed photo with, which the detector learnt as "no photo here".
LETTERBOX_GRAY = 114

# The runtimes the `yolo` model can run the detector on (its config parameter `format`), and the file each reads
# from the model version folder, as convert/build_model_repository.py writes them: OpenVINO and ONNX Runtime both
# read the ONNX export.
DETECTOR_FILES = {"openvino": "plate_detector.onnx", "onnx": "plate_detector.onnx", "torch": "plate_detector.pt"}
CPU_ONLY = ("openvino", "onnx")  # the runtimes whose installed builds run on the CPU only
# The precisions OpenVINO may run the detector at (config parameter `precision`); the other runtimes run f32. "auto"
# is OpenVINO's own choice: bf16 on a CPU with bfloat16 instructions (AVX512_BF16 or AMX), f32 on the others, where
# bf16 would be emulated, slower than f32. "int8" is another file, the ONNX export with its convolutions quantized
# (INT8_FILE, made by convert/quantize_detector.py), which OpenVINO or ONNX Runtime runs.
PRECISIONS = ("f32", "bf16", "auto", "int8")
INT8_FILE = "plate_detector.int8.onnx"


def detector_format(text: str) -> str:
    """A config value naming a detector runtime: one of DETECTOR_FILES."""
    if text not in DETECTOR_FILES:
        raise ValueError(f"must be one of {', '.join(DETECTOR_FILES)}")
    return text


def detector_file(format: str, precision: str) -> str:
    """The file of the model version folder that the detector runs from in `format` at `precision`."""
    if precision == "int8" and format not in CPU_ONLY:
        raise ValueError(f"precision 'int8' is for format {' or '.join(CPU_ONLY)}; format '{format}' runs f32")
    return INT8_FILE if precision == "int8" else DETECTOR_FILES[format]


def inference_precision(text: str) -> str:
    """A config value naming the detector's precision: one of PRECISIONS."""
    if text not in PRECISIONS:
        raise ValueError(f"must be one of {', '.join(PRECISIONS)}")
    return text


@dataclass(frozen=True)
class DetectorSettings:
    """The detector runs once per inference size, each with its own confidence threshold; their boxes are merged.

    One pass at 608 at 0.2 was chosen for the one-class detector before the committed one (its last training run
    was at 640): served, on the val photos, recall 0.894 and precision 0.903, plates under 40 px 11 of 18 (at 0.25:
    0.885, 0.911; at 640 and 0.2: 0.865, 0.882; at 480 and 0.2: 0.837, 0.926; a second pass at 640 adds nothing,
    and no pair of sizes from 480 to 768, at 0.25 to 0.5 each, finds more). A second size pays where a detector sees
    some plates only at one scale: the one before, trained at 480 only, needed 480 and 608. Chosen as the highest
    recall with precision at least 0.85, then the most small plates, on the val photos themselves. The committed
    detector was trained at 608 and is served as it was measured, without choosing again on the val photos.
    """

    imgsz: tuple[int, ...] = (608,)
    conf: tuple[float, ...] = (0.2,)
    iou: float = 0.5  # boxes overlapping more than this are one plate, within a pass and across passes
    max_det: int = 100
    # A second look at a photo where those passes found no plate, or one wider than `second_look_width` of the
    # photo's longer side: a pass at `second_look_imgsz` (0: never), the photo filling `second_look_fill` of its
    # square frame (1: the whole frame, as Ultralytics letterboxes it), its boxes merged with theirs. That trigger
    # served the one-class detector before the committed one, which learnt mostly small plates (median width 0.07 of
    # the longer side) and boxed a plate filling a third of the frame in part or not at all.
    #
    # The committed detector learnt close-ups; what it misses is a plate filling the photo edge to edge, which it
    # scores 0.1 there and 0.8 to 0.95 with the photo shrunk to 0.5 to 0.8 of its frame (5719KB42, a 480 px square
    # close-up of a two-line plate). So with `second_look_hint` above 0 the second look goes only to a photo where the
    # first passes found no plate but scored a box over the hint (at most their conf) wider than `second_look_width`
    # of its longer side. A photo with no plate rarely holds one, and costs no second pass: of the 1,116 photos of
    # the dev sets, 4 did, and the second look found their plate in 3 and nothing else (docs/performance.md).
    second_look_imgsz: int = 608
    second_look_conf: float = 0.2
    second_look_width: float = 0.3
    second_look_fill: float = 0.6
    second_look_hint: float = 0.05
    # A close look at each doubt: a box the first passes scored from `close_look_hint` to under their conf, which a
    # plate too small or too dim for them leaves (C565CY77, 70 px at dusk in a 1280 px photo, scored 0.18 at 608). A
    # square window around it, `close_look_window` times its width, the box in its middle, is shown to the detector
    # at `close_look_imgsz` (0: never) and its boxes over `close_look_conf` added where no box of the first passes
    # overlaps them, so a plate they found keeps its box and reading. A window is never enlarged (it is at least
    # `close_look_imgsz` px): enlarged, a 54 px window round a speck on car.jpg's van showed the detector a plate. At
    # most `close_look_doubts` windows a photo, the likeliest doubts first. The hint 0.15 was chosen on the dev sets:
    # 17 of their 522 photos hold such a doubt (at 0.05, 100, for 2 more labelled plates, 10 more boxes matching no
    # label and 1.16 times the served p90). One more pass over the whole photo at 1024 found one plate more and
    # doubled the served p90 (docs/performance.md, "A close look").
    close_look_imgsz: int = 256
    close_look_conf: float = 0.5
    close_look_hint: float = 0.15
    close_look_window: float = 3.0
    close_look_doubts: int = 1
    # Parts of a plate boxed beside it, or its two rows boxed apart, made one plate (whole_plates).
    whole_plates: bool = True

    def __post_init__(self) -> None:
        if not self.imgsz or len(self.imgsz) != len(self.conf):
            raise ValueError(f"parameter 'conf' needs one value per 'imgsz': imgsz {self.imgsz}, conf {self.conf}")
        if not 0 < self.second_look_fill <= 1:
            raise ValueError(f"parameter 'second_look_fill' = {self.second_look_fill} must be above 0 and at most 1")
        if self.close_look_window < 1:
            window = self.close_look_window
            raise ValueError(f"parameter 'close_look_window' = {window} must be at least 1: its doubt's width")

    @property
    def hint_floor(self) -> float:
        """The lowest score a look that takes hints needs the first passes to report under their conf (0: none)."""
        looks = (self.second_look_hint, self.second_look_imgsz), (self.close_look_hint, self.close_look_imgsz)
        return min((hint for hint, imgsz in looks if imgsz and hint), default=0.0)

    def one_shape_looks(self) -> tuple[int, ...]:
        """The inference sizes of the looks that show the detector a square frame every time, whatever the photo: a
        close look's window, and a second look's shrunk photo centred on gray (`second_look_fill` under 1)."""
        sizes = [self.close_look_imgsz] if self.close_look_imgsz and self.close_look_hint else []
        if self.second_look_imgsz and self.second_look_fill < 1:
            sizes.append(self.second_look_imgsz)
        return tuple(dict.fromkeys(sizes))

    def wants_second_look(
        self,
        boxes: np.ndarray,
        width: int,
        height: int,
        hints: np.ndarray | None = None,
        hint_scores: np.ndarray | None = None,
    ) -> bool:
        """Whether the first passes' boxes (x1 y1 x2 y2), and those they scored under their conf (`hints`, scored
        `hint_scores`; all of them at least `second_look_hint` where no scores are given), leave a photo of this size
        to a second look."""
        if not self.second_look_imgsz:
            return False
        widths = _widths(boxes)
        limit = self.second_look_width * max(width, height)
        if self.second_look_hint:
            hint_widths = _widths(hints)
            if hint_scores is not None:
                hint_widths = hint_widths[np.asarray(hint_scores).reshape(-1) >= self.second_look_hint]
            return len(widths) == 0 and bool((hint_widths > limit).any())
        return len(widths) == 0 or bool(widths.max() > limit)

    def doubts(self, hints: np.ndarray | None, hint_scores: np.ndarray | None) -> np.ndarray:
        """The boxes the close look looks around: of the first passes' `hints` (x1 y1 x2 y2), those scored from
        `close_look_hint` (`hint_scores`), the likeliest first, at most `close_look_doubts` of them."""
        if not (self.close_look_imgsz and self.close_look_hint) or hints is None or hint_scores is None:
            return np.zeros((0, 4), np.float32)
        hint_scores = np.asarray(hint_scores, np.float32).reshape(-1)
        order = np.argsort(-hint_scores, kind="stable")
        order = order[hint_scores[order] >= self.close_look_hint][: self.close_look_doubts]
        return np.asarray(hints, np.float32).reshape(-1, 4)[order]


def _widths(boxes: np.ndarray | None) -> np.ndarray:
    boxes = np.zeros((0, 4), np.float32) if boxes is None else np.asarray(boxes, np.float32).reshape(-1, 4)
    return boxes[:, 2] - boxes[:, 0]


@dataclass(frozen=True)
class Detections:
    boxes: np.ndarray  # [N, 4] float32, x1 y1 x2 y2 in input-image pixels
    scores: np.ndarray  # [N] float32
    # [N] int: rows of characters, 1 or 2 (a detector of two classes tells them: 0 one-line, 1 two-line; one of a
    # single class finds one-line plates only)
    lines: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.lines is None:
            object.__setattr__(self, "lines", np.ones(len(self.scores), np.int64))

    def __len__(self) -> int:
        return len(self.scores)


def merge(
    boxes: list[np.ndarray], scores: list[np.ndarray], lines: list[np.ndarray], iou: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One box per plate from several passes' boxes (with their scores and rows): non-maximum suppression over all of
    them, whatever their class: a plate is one plate, however many rows a pass saw in it."""
    import torch
    import torchvision

    boxes_t = torch.from_numpy(np.concatenate([np.asarray(b, np.float32).reshape(-1, 4) for b in boxes]))
    scores_t = torch.from_numpy(np.concatenate([np.asarray(s, np.float32).reshape(-1) for s in scores]))
    lines_n = np.concatenate([np.asarray(n, np.int64).reshape(-1) for n in lines])
    keep = torchvision.ops.nms(boxes_t, scores_t, iou).numpy()
    return boxes_t.numpy()[keep], scores_t.numpy()[keep], lines_n[keep]


def add_new(
    found: tuple[np.ndarray, np.ndarray, np.ndarray], more: tuple[np.ndarray, np.ndarray, np.ndarray], iou: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`found`'s boxes (with their scores and rows), and those of `more` that overlap none of them more than `iou`,
    by descending score. Unlike merge, a plate found keeps its box even where `more` scores it higher."""
    import torch
    import torchvision

    boxes, scores, lines = found
    more_boxes = np.asarray(more[0], np.float32).reshape(-1, 4)
    if len(boxes) and len(more_boxes):
        overlap = torchvision.ops.box_iou(torch.from_numpy(more_boxes), torch.from_numpy(boxes)).numpy()
        new = overlap.max(axis=1) <= iou
    else:
        new = np.ones(len(more_boxes), bool)
    boxes = np.concatenate([np.asarray(boxes, np.float32).reshape(-1, 4), more_boxes[new]])
    scores = np.concatenate([np.asarray(scores, np.float32).reshape(-1), np.asarray(more[1], np.float32)[new]])
    lines = np.concatenate([np.asarray(lines, np.int64).reshape(-1), np.asarray(more[2], np.int64)[new]])
    order = np.argsort(-scores, kind="stable")
    return boxes[order], scores[order], lines[order]


def whole_plates(boxes: np.ndarray, scores: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One box per plate where the detector boxed parts of one: two one-line boxes that are the rows of one square
    plate become that plate, two-line, with the likelier score; then a box mostly inside a likelier one is dropped.
    Boxes x1 y1 x2 y2, ordered by descending score, as merge leaves them; so are those returned."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4).copy()
    scores, lines = np.asarray(scores, np.float32).reshape(-1), np.asarray(lines, np.int64).reshape(-1).copy()
    # Pairs compared as matrices: pair by pair in Python, 10 boxes took 0.8 ms, and max_det is 100.
    one_line = lines == 1
    rows = _rows(boxes) & one_line[:, None] & one_line[None, :]
    keep = np.ones(len(boxes), bool)
    for i in np.flatnonzero(one_line):
        later = np.flatnonzero(rows[i, i + 1 :] & keep[i + 1 :])
        if keep[i] and later.size:  # the likelier row's score stands for the plate, in its place in the order
            j = i + 1 + later[0]
            boxes[i] = np.concatenate([np.minimum(boxes[i, :2], boxes[j, :2]), np.maximum(boxes[i, 2:], boxes[j, 2:])])
            lines[i], keep[j] = 2, False
    boxes, scores, lines = boxes[keep], scores[keep], lines[keep]
    inside = _inside(boxes)
    kept: list[int] = []
    for i in range(len(boxes)):
        if not (inside[i, kept] >= PART_INSIDE).any():
            kept.append(i)
    return boxes[kept], scores[kept], lines[kept]


def _inside(boxes: np.ndarray) -> np.ndarray:
    """[i, j]: the share of box i's area that lies inside box j."""
    width = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0])
    height = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1])
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return np.clip(width, 0, None) * np.clip(height, 0, None) / np.maximum(area, 1e-6)[:, None]


def _rows(boxes: np.ndarray) -> np.ndarray:
    """[i, j]: whether boxes i and j are the two rows of one square plate (one on the other, as wide)."""
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    upper = (y1 + y2)[:, None] <= (y1 + y2)[None, :]  # [i, j]: i is the upper one
    top_y1 = np.where(upper, y1[:, None], y1[None, :])
    top_y2 = np.where(upper, y2[:, None], y2[None, :])
    low_y1 = np.where(upper, y1[None, :], y1[:, None])
    heights = y2 - y1
    mean_height = (heights[:, None] + heights[None, :]) / 2
    widths = x2 - x1
    shared = np.minimum(x2[:, None], x2[None, :]) - np.maximum(x1[:, None], x1[None, :])
    union_width = np.maximum(x2[:, None], x2[None, :]) - np.minimum(x1[:, None], x1[None, :])
    union_height = np.maximum(y2[:, None], y2[None, :]) - np.minimum(y1[:, None], y1[None, :])
    return (
        (low_y1 - top_y2 <= ROWS_GAP * mean_height)
        & (low_y1 > top_y1)
        & (shared >= ROWS_SPAN * np.maximum(widths[:, None], widths[None, :]))
        & (union_width <= TWO_LINE_WIDEST * union_height)
    )


def postprocess(
    boxes: np.ndarray, scores: np.ndarray, width: int, height: int, lines: np.ndarray | None = None
) -> Detections:
    """Clip boxes to the image, drop degenerate ones, and order by descending score."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4).copy()
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    lines = np.ones(len(scores), np.int64) if lines is None else np.asarray(lines, np.int64).reshape(-1)
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
    keep = ((boxes[:, 2] - boxes[:, 0]) >= MIN_BOX_SIDE) & ((boxes[:, 3] - boxes[:, 1]) >= MIN_BOX_SIDE)
    boxes, scores, lines = boxes[keep], scores[keep], lines[keep]
    order = np.argsort(-scores, kind="stable")
    return Detections(boxes[order], scores[order], lines[order])


class PlateDetector:
    """Loads the detector once; `detect` takes a BGR image and returns its plates' boxes and scores.

    Its ONNX export runs on OpenVINO or ONNX Runtime through plates.detection.onnx_detector; its PyTorch weights (`.pt`,
    the GPU's format) through plates.detection.torch_detector: both give the boxes of Ultralytics' predictor."""

    def __init__(
        self,
        weights: str | Path,
        device: str = "cpu",
        settings: DetectorSettings = DetectorSettings(),
        threads: int = 0,
        runtime: str = "onnx",
        precision: str = "f32",
        cuda_graphs: bool = False,
    ):
        """`threads`: how many threads the runtime runs an ONNX detector on (0: one per core); `runtime`: which runs
        it, "onnx" (ONNX Runtime) or "openvino"; `precision`: OpenVINO's (PRECISIONS), the others' is f32 ("auto"
        is theirs too); `cuda_graphs`: PyTorch weights on a GPU replay each shape's forward pass as a CUDA graph."""
        if precision == "bf16" and runtime != "openvino":
            raise ValueError(f"precision '{precision}' is for format 'openvino' only; format '{runtime}' runs f32")
        self.device = device
        self.settings = settings
        self.network: OnnxDetector | TorchDetector
        if Path(weights).suffix == ".onnx":
            # A quantized file runs its convolutions in INT8 and the few other operations in f32.
            self.network = OnnxDetector(Path(weights), runtime, threads, "f32" if precision == "int8" else precision)
            self.precision = "int8" if precision == "int8" else self.network.precision
            self.network.reserve(settings.one_shape_looks())
        else:
            import torch

            from plates.detection.torch_detector import TorchDetector

            self.network = TorchDetector(Path(weights), torch.device(device), cuda_graphs)
            self.precision = self.network.precision

    def detect(self, image: np.ndarray) -> Detections:
        s = self.settings
        height, width = image.shape[:2]
        passes, hints, hint_scores = self._first_passes(image)
        boxes, scores, lines = merge(*zip(*passes), s.iou)
        for doubt in s.doubts(hints, hint_scores):
            boxes, scores, lines = add_new((boxes, scores, lines), self._look_around(image, doubt), s.iou)
        if s.wants_second_look(boxes, width, height, hints, hint_scores):
            second = self._look_shrunk(image, s.second_look_imgsz, s.second_look_conf, s.second_look_fill)
            boxes, scores, lines = merge(*zip((boxes, scores, lines), second), s.iou)
        if s.whole_plates:
            boxes, scores, lines = whole_plates(boxes, scores, lines)
        return postprocess(boxes[: s.max_det], scores[: s.max_det], width, height, lines[: s.max_det])

    def _first_passes(
        self, image: np.ndarray
    ) -> tuple[list[tuple[np.ndarray, ...]], np.ndarray | None, np.ndarray | None]:
        """Each first pass's boxes, scores and rows at its conf; and, where a look takes hints, the boxes they scored
        from the settings' hint_floor to at most their conf, and those boxes' scores (else None, None)."""
        s = self.settings
        hint = s.hint_floor
        if not hint:
            return [self._look(image, imgsz, conf) for imgsz, conf in zip(s.imgsz, s.conf)], None, None
        passes, hints, hint_scores = [], [], []
        for imgsz, conf in zip(s.imgsz, s.conf):
            # Looking down to the hint adds boxes scored under conf only, and these suppress none scored above it.
            boxes, scores, lines = self._look(image, imgsz, min(conf, hint))
            found = scores > conf  # as Ultralytics' NMS keeps them
            passes.append((boxes[found], scores[found], lines[found]))
            hints.append(boxes[~found])
            hint_scores.append(scores[~found])
        return passes, np.concatenate(hints), np.concatenate(hint_scores)

    def _look_shrunk(
        self, image: np.ndarray, imgsz: int, conf: float, fill: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One pass at the photo shrunk to `fill` of a square `imgsz` frame, centred on Ultralytics' letterbox gray;
        its boxes in the photo's pixels."""
        import cv2

        if fill == 1:  # Ultralytics' own letterbox: a rectangle, no larger than the photo needs
            return self._look(image, imgsz, conf)
        height, width = image.shape[:2]
        scale = imgsz * fill / max(height, width)
        small = cv2.resize(
            image, (max(1, round(width * scale)), max(1, round(height * scale))), interpolation=cv2.INTER_AREA
        )
        frame = np.full((imgsz, imgsz, 3), LETTERBOX_GRAY, np.uint8)
        top, left = (imgsz - small.shape[0]) // 2, (imgsz - small.shape[1]) // 2
        frame[top : top + small.shape[0], left : left + small.shape[1]] = small
        boxes, scores, lines = self._look(frame, imgsz, conf)
        return (boxes - np.array([left, top, left, top], np.float32)) / scale, scores, lines

    def _look_around(self, image: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The close look at one doubt: a square window centred on `box`, close_look_window times its width and at
        least close_look_imgsz, padded with Ultralytics' letterbox gray where it leaves the photo (so every window is
        one shape to the runtime), one pass over it at close_look_imgsz and close_look_conf; its boxes in the photo's
        pixels."""
        s = self.settings
        x1, y1, x2, y2 = (float(v) for v in box)
        side = max(s.close_look_imgsz, round(s.close_look_window * (x2 - x1)))
        left, top = round((x1 + x2 - side) / 2), round((y1 + y2 - side) / 2)
        height, width = image.shape[:2]
        window = np.full((side, side, 3), LETTERBOX_GRAY, np.uint8)
        x_from, y_from, x_to, y_to = max(0, left), max(0, top), min(width, left + side), min(height, top + side)
        if x_to > x_from and y_to > y_from:
            window[y_from - top : y_to - top, x_from - left : x_to - left] = image[y_from:y_to, x_from:x_to]
        boxes, scores, lines = self._look(window, s.close_look_imgsz, s.close_look_conf)
        return boxes + np.array([left, top, left, top], np.float32), scores, lines

    def _look(self, image: np.ndarray, imgsz: int, conf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One pass at one inference size: its boxes, scores and rows."""
        return self.network.look(image, imgsz, conf, self.settings.iou, self.settings.max_det)
