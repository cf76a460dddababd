"""The orchestration behind `plate_recognition`: detector, then STN and LPRNet on the crops, then decoding.

Tensors are torch tensors on whatever device the models put them; the adapter moves them between Triton and torch
through DLPack, so on a GPU they never visit the host until the final, small outputs are decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import torch

from plates.images import check_image_layout
from plates.recognition.ctc import greedy_decode
from plates.recognition.formats import is_valid_plate

# infer(model_name, inputs by name, output names) -> outputs by name
Infer = Callable[[str, Mapping[str, torch.Tensor], list[str]], dict[str, torch.Tensor]]


@dataclass(frozen=True)
class Plates:
    boxes: np.ndarray  # [N, 4] float32
    texts: list[str]  # "" where the reading is not a valid plate
    scores: np.ndarray  # [N] float32, detector confidence

    @classmethod
    def empty(cls) -> "Plates":
        return cls(np.zeros((0, 4), np.float32), [], np.zeros((0,), np.float32))


def in_batches(infer: Infer, model: str, batch: torch.Tensor, max_batch_size: int) -> torch.Tensor:
    """Run `model` over `batch` in chunks its max_batch_size accepts, and join the outputs."""
    outputs = [
        infer(model, {"input__0": chunk}, ["output__0"])["output__0"]
        for chunk in torch.split(batch, max_batch_size)
    ]
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs)


def recognize(image: torch.Tensor, infer: Infer, max_batch_size: int) -> Plates:
    # Checked here, not only in yolo: Triton 2.51 reports every error of a BLS sub-request as INTERNAL, and a bad
    # image is the client's fault (INVALID_ARG).
    check_image_layout(tuple(image.shape), str(image.dtype).removeprefix("torch."), "input__0")
    detected = infer("yolo", {"input__0": image}, ["output__0", "output__1", "output__2"])
    crops = detected["output__0"]
    if crops.shape[0] == 0:
        return Plates.empty()
    straightened = in_batches(infer, "stn", crops, max_batch_size)
    logits = in_batches(infer, "lprnet", straightened, max_batch_size)
    readings = greedy_decode(logits.cpu().numpy())
    texts = [r.text if is_valid_plate(r.text) else "" for r in readings]
    boxes = detected["output__1"].cpu().numpy().astype(np.float32)
    scores = detected["output__2"].cpu().numpy().astype(np.float32)
    return Plates(boxes, texts, scores)
