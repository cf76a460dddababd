"""The plate detector: an Ultralytics YOLO model, and what comes before and after it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Ultralytics checks for updates and fonts online unless told not to; the service must never reach out.
os.environ.setdefault("YOLO_OFFLINE", "1")

# Boxes smaller than this on either side hold no readable plate; they are detector noise.
MIN_BOX_SIDE = 2.0


@dataclass(frozen=True)
class DetectorSettings:
    imgsz: int = 640
    conf: float = 0.25
    iou: float = 0.5
    max_det: int = 100


@dataclass(frozen=True)
class Detections:
    boxes: np.ndarray  # [N, 4] float32, x1 y1 x2 y2 in input-image pixels
    scores: np.ndarray  # [N] float32

    def __len__(self) -> int:
        return len(self.scores)


def postprocess(boxes: np.ndarray, scores: np.ndarray, width: int, height: int) -> Detections:
    """Clip boxes to the image, drop degenerate ones, and order by descending score."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4).copy()
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
    keep = ((boxes[:, 2] - boxes[:, 0]) >= MIN_BOX_SIDE) & ((boxes[:, 3] - boxes[:, 1]) >= MIN_BOX_SIDE)
    boxes, scores = boxes[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")
    return Detections(boxes[order], scores[order])


class PlateDetector:
    """Loads the detector once; `detect` takes a BGR image and returns its plates' boxes and scores."""

    def __init__(self, weights: str | Path, device: str = "cpu", settings: DetectorSettings = DetectorSettings()):
        from ultralytics import YOLO

        self.model = YOLO(str(weights), task="detect")
        self.device = device
        self.settings = settings

    def detect(self, image: np.ndarray) -> Detections:
        s = self.settings
        result = self.model.predict(
            image, imgsz=s.imgsz, conf=s.conf, iou=s.iou, max_det=s.max_det, device=self.device, verbose=False
        )[0]
        height, width = image.shape[:2]
        return postprocess(result.boxes.xyxy.cpu().numpy(), result.boxes.conf.cpu().numpy(), width, height)
