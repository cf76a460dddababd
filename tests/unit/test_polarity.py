"""Telling a crop's light characters on a dark plate (police, military, diplomatic) from dark ones on a light plate,
on plates rendered in their real colours and cut as the recognizers read them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from plates.recognition.crops import CROP_WIDTH, normalize, normalize_rows
from plates.recognition.polarity import LIGHT_CHARACTERS_BELOW, light_share
from plates.training.synthetic import random_text, render_plate


def _crop(style: str, seed: int = 0) -> torch.Tensor:
    """A plate of `style` as the one-line reader's [3, 24, 188] input: its 94 px, then zero, as yolo pads it."""
    rng = np.random.default_rng(seed)
    crop = torch.zeros(3, 24, 2 * CROP_WIDTH)
    crop[:, :, :CROP_WIDTH] = torch.from_numpy(normalize(render_plate(random_text(style, rng), style, rng)))
    return crop


def _two_line_rows() -> torch.Tensor:
    """A white type 1A plate as the two-line reader's [3, 24, 188] input: its rows apart."""
    rng = np.random.default_rng(1)
    return torch.from_numpy(normalize_rows(render_plate(random_text("square", rng), "square", rng)))


@pytest.mark.parametrize("style", ["private", "taxi", "trailer"])
def test_dark_characters_on_a_light_plate_take_the_smaller_dark_side(style):
    assert float(light_share(_crop(style)[None], [1])[0]) > LIGHT_CHARACTERS_BELOW


@pytest.mark.parametrize("style", ["police", "military", "diplomatic"])
def test_light_characters_on_a_dark_plate_take_the_smaller_light_side(style):
    assert float(light_share(_crop(style)[None], [1])[0]) < LIGHT_CHARACTERS_BELOW


def test_a_crop_negated_swaps_its_sides():
    crops = torch.stack([_crop(style, seed) for seed, style in enumerate(["private", "police"])])
    shares = light_share(crops, [1, 1])
    negated = light_share(-crops, [1, 1])
    # Negated, each crop's core splits at the same threshold the other way round (up to the levels at the threshold).
    np.testing.assert_allclose((shares + negated).numpy(), 1.0, atol=0.05)


def test_a_two_line_crops_both_rows_count():
    rows = _two_line_rows()
    # The top row alone, then its other half dark, as a black plate's lower row with no ink would be.
    half_dark = rows.clone()
    half_dark[:, :, CROP_WIDTH:] = -1
    one_line, two_lines = light_share(torch.stack([half_dark, half_dark]), [1, 2]).tolist()
    assert one_line > LIGHT_CHARACTERS_BELOW > two_lines
    assert float(light_share(rows[None], [2])[0]) > LIGHT_CHARACTERS_BELOW


def test_crops_of_one_and_two_lines_are_measured_apart_in_one_call():
    crops = torch.stack([_crop("private"), _crop("police"), _two_line_rows()])
    alone = [float(light_share(crop[None], [lines])[0]) for crop, lines in zip(crops, [1, 1, 2])]
    np.testing.assert_allclose(light_share(crops, [1, 1, 2]).numpy(), alone)
