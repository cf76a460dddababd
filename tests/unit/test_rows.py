"""Reading a two-line plate's rows apart: the rows split out of a set's crops, their logits joined into one sequence
per plate and decoded over its own frames, and a training step on a set that mixes both (the crops themselves:
test_two_line_plates.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from plates.nets import LPRNet, SpatialTransformer
from plates.recognition.alphabet import ALPHABET
from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH
from plates.recognition.rows import join_rows, read_joined, split_rows
from plates.training.dataset import CropSet, mixed, to_tensor
from plates.training.trainer import TrainSettings, read_texts, train

BLANK = len(ALPHABET)


def _crops(rows: list[int]) -> np.ndarray:
    """Crops 188 px wide whose every row of 94 px is filled with its number, counted over all crops' rows."""
    crops = np.zeros((len(rows), CROP_HEIGHT, 2 * CROP_WIDTH, 3), np.uint8)
    number = 1
    for index, count in enumerate(rows):
        for slot in range(count):
            crops[index, :, slot * CROP_WIDTH : (slot + 1) * CROP_WIDTH] = number
            number += 1
    return crops


def test_split_rows_takes_each_crops_rows_in_order_and_skips_the_unused_half():
    rows = split_rows(to_tensor(_crops([2, 1, 2])), [2, 1, 2])
    assert rows.shape == (5, 3, CROP_HEIGHT, CROP_WIDTH)
    assert [round(float(row.max()), 3) for row in rows] == [round((n - 127.5) / 128, 3) for n in range(1, 6)]
    assert all(row.min() == row.max() for row in rows)
    one_line = to_tensor(np.zeros((3, CROP_HEIGHT, CROP_WIDTH, 3), np.uint8))
    assert split_rows(one_line, [1, 1, 1]) is one_line
    with pytest.raises(ValueError, match="cannot hold 2 rows"):
        split_rows(one_line, [1, 2, 1])


def test_join_rows_puts_a_plates_rows_end_to_end_and_counts_its_frames():
    logits = torch.arange(5, dtype=torch.float32)[:, None, None].expand(5, 3, 4).clone()  # row r: all r
    joined, frames = join_rows(logits, [2, 1, 2])
    assert joined.shape == (3, 3, 8) and frames.tolist() == [8, 4, 8]
    assert joined[0, 0].tolist() == [0] * 4 + [1] * 4
    assert joined[1, 0].tolist() == [2] * 4 + [0] * 4  # zero past its frames
    assert joined[2, 0].tolist() == [3] * 4 + [4] * 4
    with pytest.raises(ValueError, match="4 rows of logits for plates of 5 rows"):
        join_rows(logits[:4], [2, 1, 2])


def _spelling(text: str, frames: int) -> np.ndarray:
    """Logits [classes, frames] that spell `text`, a character and a blank by turns, blanks after."""
    logits = np.full((BLANK + 1, frames), -10.0, np.float32)
    logits[BLANK] = 10.0
    for position, char in enumerate(text):
        logits[BLANK, 2 * position] = -10.0
        logits[ALPHABET.index(char), 2 * position] = 10.0
    return logits


def test_read_joined_reads_the_top_row_then_the_bottom_one_as_one_plate():
    top, bottom, one_line = _spelling("H701", 18), _spelling("HE27", 18), _spelling("A123BC77", 18)
    joined, frames = join_rows(torch.from_numpy(np.stack([top, bottom, one_line])), [2, 1])
    texts = [reading.text for reading in read_joined(joined.numpy(), frames.numpy(), [2, 1])]
    # The one-line plate's zero frames past its 18 would read as noise, not as blanks.
    assert texts == ["H701HE27", "A123BC77"]


def test_read_joined_reads_a_two_line_plate_in_the_two_line_formats_only():
    # Rows spelling a trailer's one-line text (AB12 over 3477), each of B, 3 and 4 with a runner-up (8, B, A): the
    # two-line plate reads the likeliest text made on two lines, the one-line plate beside it its own spelling.
    top, bottom, one_line = _spelling("AB12", 18), _spelling("3477", 18), _spelling("AB123477", 18)
    for logits, frame, runner_up in ((top, 2, "8"), (bottom, 0, "B"), (bottom, 2, "A")):
        logits[ALPHABET.index(runner_up), frame] = 9.0
    joined, frames = join_rows(torch.from_numpy(np.stack([top, bottom, one_line])), [2, 1])
    texts = [reading.text for reading in read_joined(joined.numpy(), frames.numpy(), [2, 1])]
    assert texts == ["A812BA77", "AB123477"]


def test_a_set_of_rows_apart_trains_and_reads_beside_one_line_crops(tmp_path):
    rng = np.random.default_rng(0)
    two_line = CropSet.of(
        [rng.integers(0, 256, (CROP_HEIGHT, 2 * CROP_WIDTH, 3), dtype=np.uint8)] * 4, ["H701HE27"] * 4
    )
    one_line = CropSet(rng.integers(0, 256, (4, CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8), ["A123BC77"] * 4)
    data = mixed([two_line, one_line], seed=1)
    assert data.images.shape[2] == 2 * CROP_WIDTH and sorted(data.lines.tolist()) == [1] * 4 + [2] * 4
    settings = TrainSettings(epochs=1, batch_size=4, synthetic_per_epoch=4, warmup_steps=1)
    history = train(SpatialTransformer(), LPRNet(), data, one_line, {"val": data}, tmp_path, settings, lambda _: None)
    assert np.isfinite(history[0]["loss"])
    assert len(read_texts(SpatialTransformer(), LPRNet(), data.images, data.lines)) == 8


def test_crop_sets_keep_their_rows_through_save_and_load(tmp_path):
    data = CropSet.of(
        [np.zeros((CROP_HEIGHT, 2 * CROP_WIDTH, 3), np.uint8), np.zeros((CROP_HEIGHT, CROP_WIDTH, 3), np.uint8)],
        ["H701HE27", "A123BC77"],
    )
    assert data.images.shape == (2, CROP_HEIGHT, 2 * CROP_WIDTH, 3) and data.lines.tolist() == [2, 1]
    data.save(tmp_path / "set.npz")
    assert CropSet.load(tmp_path / "set.npz").lines.tolist() == [2, 1]
    np.savez(tmp_path / "old.npz", images=data.images[1:, :, :CROP_WIDTH], texts=np.array(["A123BC77"]))
    assert CropSet.load(tmp_path / "old.npz").lines.tolist() == [1]  # sets cached before rows apart
