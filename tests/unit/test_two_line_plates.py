"""Two-line plates: their synthetic renderings, the texts the decoder's grammar must accept, and the recognizer's
inputs made of their rows: side by side in one crop, or apart."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from plates.recognition.crops import (
    CROP_HEIGHT,
    CROP_WIDTH,
    CropVariant,
    crop_rows,
    cut_crops,
    normalize,
    normalize_rows,
    normalize_two_line,
    prepare_crops,
    row_parts,
    rows_apart,
    side_by_side,
)
from plates.recognition.formats import plate_format
from plates.training import synthetic
from plates.training.augment import to_crop

needs_font = pytest.mark.skipif(not synthetic.FONT_PATH.is_file(), reason="needs the shared fonts/")


@pytest.mark.parametrize(
    ("style", "grammar"), [("square", "private"), ("motorcycle", "military"), ("tractor", "military")]
)
def test_two_line_texts_are_top_row_bottom_row_region_in_a_format_the_decoder_knows(style, grammar):
    rng = np.random.default_rng(0)
    texts = [synthetic.random_text(style, rng) for _ in range(300)]
    assert {plate_format(text) for text in texts} == {grammar}
    layout = synthetic.TWO_LINE_STYLES[style]
    assert all(text.startswith(tuple("ABEKMHOPCTYX")) == (layout.top[0] == "L") for text in texts)
    assert synthetic.lines(style) == 2 and synthetic.lines("private") == 1


def test_the_issues_examples_read_as_the_formats_two_line_plates_are_written_in():
    assert plate_format("H701HE27") == "private"  # type 1A: H 701 / HE 27
    assert plate_format("8343AT50") == "military"  # a motorcycle: 8343 / AT 50


def test_two_line_formats_are_drawn_as_their_shares_say():
    rng = np.random.default_rng(1)
    drawn = [synthetic.random_two_line_format(rng) for _ in range(2000)]
    for style, share in synthetic.TWO_LINE_SHARES.items():
        assert abs(drawn.count(style) / len(drawn) - share) < 0.04


def _ink_rows(plate: np.ndarray) -> np.ndarray:
    """Share of dark pixels in each pixel row, the rim left out."""
    grey = cv2.cvtColor(plate, cv2.COLOR_BGR2GRAY)
    inside = grey[8:-8, 8:-8]
    return (inside < 100).mean(1)


@needs_font
@pytest.mark.parametrize("style", sorted(synthetic.TWO_LINE_STYLES))
def test_two_line_plate_is_its_size_with_ink_on_both_rows_and_a_gap_between(style):
    rng = np.random.default_rng(2)
    layout = synthetic.TWO_LINE_STYLES[style]
    for _ in range(5):
        text = synthetic.random_text(style, rng)
        plate = synthetic.render_plate(text, style, rng)
        height, width = plate.shape[:2]
        assert (width, height) in {
            (round(w * synthetic.PIXELS_PER_MM), round(h * synthetic.PIXELS_PER_MM)) for w, h in layout.sizes_mm
        }
        if cv2.cvtColor(plate, cv2.COLOR_BGR2GRAY).mean() < 100:
            plate = 255 - plate  # a black plate: its characters are the light pixels
        rows = _ink_rows(plate)
        top_row = rows[: int(0.4 * len(rows))].max()
        bottom_row = rows[int(0.55 * len(rows)) :].max()
        baseline = layout.top_row[2]
        gap = rows[int((baseline + 0.03) * len(rows)) : int((layout.region_box[1] - 0.01) * len(rows))]
        assert top_row > 0.2 and bottom_row > 0.2, text
        assert gap.size and gap.max() < 0.05, text  # nothing drawn between the rows but the rim


@needs_font
def test_two_line_rendering_is_seeded_and_one_line_plates_keep_their_size():
    first = synthetic.render_plate("H701HE27", "square", np.random.default_rng(3))
    again = synthetic.render_plate("H701HE27", "square", np.random.default_rng(3))
    assert np.array_equal(first, again)
    assert synthetic.render_plate("A123BC77", "private", np.random.default_rng(3)).shape == (224, 1040, 3)


def _two_rows(height: int = 100, width: int = 170) -> np.ndarray:
    """A cut whose upper half is a dark band on white (the top row) and whose lower half a mid-grey band."""
    cut = np.full((height, width, 3), 255, np.uint8)
    cut[15:45, 20:150] = 0
    cut[55:85, 20:150] = 128
    return cut


def test_side_by_side_lays_the_top_row_left_of_the_bottom_row_each_whole():
    cut = _two_rows()
    line = side_by_side(cut)
    # Each part reaches 0.1 of the height past the middle: rows 0-59 and 40-99, side by side.
    assert line.shape == (60, 340, 3)
    assert np.array_equal(line[:, :170], cut[:60]) and np.array_equal(line[:, 170:], cut[40:])
    assert (line[:, :170] == 0).all(axis=2).sum() == 30 * 130  # the top row whole, left
    assert (line[:, 170:] == 128).all(axis=2).sum() == 30 * 130  # the bottom row whole, right


def test_side_by_side_parts_reach_past_the_parting_line_by_the_overlap():
    cut = _two_rows()
    assert side_by_side(cut, parting=0.5, overlap=0.0).shape == (50, 340, 3)
    tight = side_by_side(cut, parting=0.4, overlap=0.0)  # the top row crossed: the parts are 40 and 60 rows
    assert tight.shape == (50, 340, 3)
    assert (tight[:, :170] == 0).all(axis=2).any() and (tight[:, 170:] == 0).all(axis=2).any()


def test_rows_apart_gives_each_row_a_whole_crop_left_then_right():
    cut = _two_rows()
    crops = rows_apart(cut)
    assert crops.shape == (CROP_HEIGHT, 2 * CROP_WIDTH, 3) and crops.dtype == np.uint8
    top, bottom = crops[:, :CROP_WIDTH], crops[:, CROP_WIDTH:]
    black, grey = (top < 40).all(axis=2), (abs(top.astype(int) - 128) < 10).all(axis=2)
    # The top row whole (rows 15-45 of the part's 0-59); of the other row, only its edge (55-59) at the bottom.
    assert black.mean() > 0.3 and black[7:17].all(axis=0).sum() > 0.7 * CROP_WIDTH and not grey[:20].any()
    black, grey = (bottom < 40).all(axis=2), (abs(bottom.astype(int) - 128) < 10).all(axis=2)
    assert grey.mean() > 0.3 and grey[7:17].all(axis=0).sum() > 0.7 * CROP_WIDTH and not black[4:].any()
    upper, lower = row_parts(cut)  # the same parts as side_by_side: rows 0-59 and 40-99
    assert len(upper) == 60 and len(lower) == 60


def test_to_crop_lays_two_line_plates_out_as_asked_and_one_line_plates_alike():
    cut = _two_rows()
    assert to_crop(cut, 2).shape == (CROP_HEIGHT, CROP_WIDTH, 3)
    assert np.array_equal(to_crop(cut, 2, "rows"), rows_apart(cut))
    assert np.array_equal(to_crop(cut, 1, "rows"), to_crop(cut, 1))


def test_normalize_two_line_is_the_recognizers_input_of_the_rows_side_by_side():
    cut = _two_rows()
    tensor = normalize_two_line(cut)
    assert tensor.shape == (3, CROP_HEIGHT, CROP_WIDTH) and tensor.dtype == np.float32
    assert np.array_equal(tensor, normalize(side_by_side(cut)))


def test_normalize_rows_is_the_recognizers_input_of_the_rows_apart():
    cut = _two_rows()
    tensor = normalize_rows(cut)
    assert tensor.shape == (3, CROP_HEIGHT, 2 * CROP_WIDTH) and tensor.dtype == np.float32
    upper, lower = row_parts(cut)
    assert np.allclose(tensor[..., :CROP_WIDTH], normalize(upper), atol=1e-6)
    assert np.allclose(tensor[..., CROP_WIDTH:], normalize(lower), atol=1e-6)


@pytest.fixture
def two_plates():
    image = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 150, 50], [200, 100, 300, 170]], np.float32)
    return image, boxes, (CropVariant(0.1, 0.03), CropVariant(0.2, 0.03))


def test_prepare_crops_lays_a_two_line_plate_side_by_side_in_one_crop(two_plates):
    image, boxes, variants = two_plates
    crops = prepare_crops(image, boxes, variants, lines=[1, 2])
    assert crops.shape == (4, 3, CROP_HEIGHT, CROP_WIDTH)
    assert np.array_equal(crops[:2], prepare_crops(image, boxes[:1], variants))
    cuts = cut_crops(image, boxes[1:], variants)
    assert np.array_equal(crops[2:], np.stack([normalize_two_line(cut) for cut in cuts]))


def test_prepare_crops_lays_a_two_line_plates_rows_apart_beside_one_line_plates(two_plates):
    image, boxes, variants = two_plates
    crops = prepare_crops(image, boxes, variants, lines=[1, 2], layout="rows")
    assert crops.shape == (4, 3, CROP_HEIGHT, 2 * CROP_WIDTH)
    one_line = prepare_crops(image, boxes[:1], variants, layout="rows")
    assert one_line.shape == (2, 3, CROP_HEIGHT, CROP_WIDTH)  # no two-line plate: 94 px, as before
    assert np.array_equal(crops[:2, ..., :CROP_WIDTH], one_line) and not crops[:2, ..., CROP_WIDTH:].any()
    cuts = cut_crops(image, boxes[1:], variants)
    assert np.array_equal(crops[2:], np.stack([normalize_rows(cut) for cut in cuts]))
    assert crop_rows(np.array([1, 2]), "rows").tolist() == [1, 2]
    assert crop_rows(np.array([1, 2]), "side-by-side").tolist() == [1, 1]
    with pytest.raises(ValueError, match="must be one of side-by-side, rows"):
        prepare_crops(image, boxes, variants, lines=[1, 2], layout="stacked")


@needs_font
def test_side_by_side_of_a_rendered_square_plate_puts_its_rows_in_their_halves():
    plate = synthetic.render_plate("H701HE27", "square", np.random.default_rng(4))
    cut = cv2.copyMakeBorder(plate, 34, 34, 10, 10, cv2.BORDER_CONSTANT, value=(90, 90, 90))  # a served pad
    line = side_by_side(cut)
    grey = cv2.cvtColor(line, cv2.COLOR_BGR2GRAY)
    half = line.shape[1] // 2
    # The top row's ink (H 701) fills the left half's middle; the right half's holds HE and the region.
    for part in (grey[:, :half], grey[:, half:]):
        ink_columns = (part[round(0.3 * len(part)) : round(0.7 * len(part))] < 80).any(0)
        assert ink_columns.mean() > 0.35
