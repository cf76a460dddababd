"""The orchestration behind `plate_recognition`: detector, then STN and LPRNet on the crops, then decoding.

Tensors are torch tensors on whatever device the models put them; the adapter moves them between Triton and torch
through DLPack, so on a GPU they never visit the host until the final, small outputs are decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from plates.decoding import decode_image
from plates.exceptions import InvalidInputError
from plates.images import check_image_layout
from plates.recognition.ctc import Reading, read_plates, vote

# infer(model_name, inputs by name, output names) -> outputs by name
Infer = Callable[[str, Mapping[str, torch.Tensor], list[str]], dict[str, torch.Tensor]]


@dataclass(frozen=True)
class Plates:
    boxes: np.ndarray  # [N, 4] float32
    texts: list[str]  # "" where the plate could not be read as a valid plate
    scores: np.ndarray  # [N] float32, detector confidence
    text_scores: np.ndarray  # [N] float32, probability of the text under the recognizer, 0 where unread
    candidates: np.ndarray  # [N, K] str (object), the likeliest texts, also where `texts` is ""; "" as padding
    candidate_scores: np.ndarray  # [N, K] float32, their probabilities; 0 as padding

    @classmethod
    def empty(cls, candidates: int) -> "Plates":
        nothing = np.zeros((0,), np.float32)
        texts, scores = pad_candidates([], candidates)
        return cls(np.zeros((0, 4), np.float32), [], nothing, nothing, texts, scores)


def pad_candidates(readings: Sequence[Reading], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` likeliest texts of each reading and their probabilities, as [N, k] arrays padded with "" and 0:
    a fixed width keeps the outputs rectangular tensors."""
    texts = np.full((len(readings), k), "", dtype=np.object_)
    scores = np.zeros((len(readings), k), np.float32)
    for row, reading in enumerate(readings):
        for column, (text, score) in enumerate(reading.candidates[:k]):
            texts[row, column], scores[row, column] = text, score
    return texts, scores


def in_batches(infer: Infer, model: str, batch: torch.Tensor, max_batch_size: int) -> torch.Tensor:
    """Run `model` over `batch` in chunks its max_batch_size accepts, and join the outputs."""
    outputs = [
        infer(model, {"input__0": chunk}, ["output__0"])["output__0"]
        for chunk in torch.split(batch, max_batch_size)
    ]
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs)


def request_image(pixels: torch.Tensor | None, encoded: np.ndarray | None, device: torch.device) -> torch.Tensor:
    """The photo of a request, which holds exactly one of `input__0` (`pixels`) and `image_bytes` (`encoded`, an
    array of one encoded file), as HWC BGR uint8 pixels: `image_bytes` is decoded on `device`, the instance's."""
    if (pixels is None) == (encoded is None):
        given = "neither" if pixels is None else "both"
        raise InvalidInputError(
            f"send exactly one of input__0 (HWC BGR pixels) and image_bytes (a JPEG or PNG file), got {given}"
        )
    if pixels is not None:
        return pixels
    if encoded.size != 1:
        raise InvalidInputError(f"image_bytes must hold one encoded photo, got {encoded.size}")
    data = encoded.reshape(-1)[0]
    if not isinstance(data, bytes):
        raise InvalidInputError(f"image_bytes must be BYTES, got {encoded.dtype}")
    return decode_image(data, device, "image_bytes")


def recognize(
    image: torch.Tensor, infer: Infer, max_batch_size: int, candidates: int = 1, min_text_score: float = 0.0
) -> Plates:
    """Every plate of `image`: its box and score, its text where text_score >= `min_text_score` ("" and 0
    otherwise), and its `candidates` likeliest texts whatever their score."""
    # Checked here, not only in yolo: Triton 2.51 reports every error of a BLS sub-request as INTERNAL, and a bad
    # image is the client's fault (INVALID_ARG).
    check_image_layout(tuple(image.shape), str(image.dtype).removeprefix("torch."), "input__0")
    detected = infer("yolo", {"input__0": image}, ["output__0", "output__1", "output__2"])
    crops, boxes = detected["output__0"], detected["output__1"]
    if boxes.shape[0] == 0:
        return Plates.empty(candidates)
    straightened = in_batches(infer, "stn", crops, max_batch_size)
    logits = in_batches(infer, "lprnet", straightened, max_batch_size)
    # yolo cuts every plate the same number of ways (its crop variants), box by box.
    readings = vote(read_plates(logits.cpu().numpy()), crops.shape[0] // boxes.shape[0])
    kept = [r.confidence >= min_text_score for r in readings]
    candidate_texts, candidate_scores = pad_candidates(readings, candidates)
    return Plates(
        boxes=boxes.cpu().numpy().astype(np.float32),
        texts=[r.text if keep else "" for r, keep in zip(readings, kept)],
        scores=detected["output__2"].cpu().numpy().astype(np.float32),
        text_scores=np.array([r.confidence if keep else 0.0 for r, keep in zip(readings, kept)], np.float32),
        candidates=candidate_texts,
        candidate_scores=candidate_scores,
    )
