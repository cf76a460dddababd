"""Reading a plate's rows apart: each row of a two-line plate goes through the recognizer as a one-line crop does
(plates.recognition.crops.rows_apart), and its rows' frames, top row first, are decoded as one text. CTC needs no
more than that: the joined frames are one sequence, and the decoder's grammar reads it as any plate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from plates.recognition.crops import CROP_WIDTH
from plates.recognition.ctc import Reading, read_plates
from plates.recognition.formats import ONE_LINE, TWO_LINE

GRAMMARS = {1: ONE_LINE, 2: TWO_LINE}  # by a plate's rows


def split_rows(crops: torch.Tensor, lines: Sequence[int]) -> torch.Tensor:
    """[N, C, H, CROP_WIDTH * L] crops, each of its `lines` rows laid left to right (the rest of its width unused),
    as [sum(lines), C, H, CROP_WIDTH]: every crop's rows, one after the other, crop by crop."""
    count, channels, height, width = crops.shape
    lines = torch.as_tensor(list(lines), dtype=torch.long, device=crops.device)
    most = int(lines.max()) if len(lines) else 1
    if width % CROP_WIDTH or width // CROP_WIDTH < most:
        raise ValueError(f"crops {width} px wide cannot hold {most} rows of {CROP_WIDTH} px")
    slots = width // CROP_WIDTH
    if slots == 1:
        return crops
    rows = crops.reshape(count, channels, height, slots, CROP_WIDTH).permute(0, 3, 1, 2, 4)
    return rows[torch.arange(slots, device=crops.device)[None, :] < lines[:, None]]


def join_rows(logits: torch.Tensor, lines: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The recognizer's logits of every row ([sum(lines), classes, T], each plate's rows one after the other) as one
    sequence per plate: [N, classes, max(lines) * T], its rows' frames end to end, zero past them; and each plate's
    frame count, lines * T."""
    lines = torch.as_tensor(list(lines), dtype=torch.long, device=logits.device)
    if int(lines.sum()) != logits.shape[0]:
        raise ValueError(f"{logits.shape[0]} rows of logits for plates of {int(lines.sum())} rows")
    frames = logits.shape[2]
    most = int(lines.max()) if len(lines) else 1
    if most == 1:
        return logits, lines * frames
    joined = logits.new_zeros((len(lines), logits.shape[1], most * frames))
    starts = torch.cumsum(lines, 0) - lines
    for slot in range(most):
        has = lines > slot
        joined[has, :, slot * frames : (slot + 1) * frames] = logits[starts[has] + slot]
    return joined, lines * frames


def read_joined(logits: np.ndarray, frames: np.ndarray, lines: Sequence[int]) -> list[Reading]:
    """join_rows' sequences of plates of `lines` rows decoded as plates, each over its own frames only (zero frames
    would read as noise), and a two-line plate in the formats made on two-line plates only."""
    readings: list[Reading | None] = [None] * len(logits)
    lines = np.asarray(lines)
    for count, rows in sorted(set(zip(frames.tolist(), lines.tolist()))):
        chosen = np.flatnonzero((frames == count) & (lines == rows))
        for index, reading in zip(chosen, read_plates(logits[chosen, :, :count], grammar=GRAMMARS[rows])):
            readings[index] = reading
    return readings
