import cv2
import numpy as np
import pytest

from plates.photos.files import read_image
from plates.recognition.crops import (
    CROP_HEIGHT,
    CROP_WIDTH,
    DEFAULT_VARIANTS,
    REFERENCE_FRAME,
    SHRUNK_CUT_WIDTH,
    CropVariant,
    _source_span,
    crop_box,
    cut_crops,
    fit,
    prepare_crops,
    variants,
    whole_frame_cuts,
)


def test_crop_box_pads_vertically_by_a_fifth_of_the_height():
    image = np.zeros((100, 200, 3), np.uint8)
    crop = crop_box(image, np.array([50, 40, 150, 60]), CropVariant(vertical_pad=0.2))
    assert crop.shape[:2] == (28, 100)  # 20 px tall + 4 above + 4 below


def test_crop_box_clips_to_the_image_and_never_returns_empty():
    image = np.zeros((100, 200, 3), np.uint8)
    assert crop_box(image, np.array([-20, -10, 30, 5])).shape[:2] == (8, 30)  # 5 + 15 * 0.2
    assert crop_box(image, np.array([199.5, 99.5, 200, 100])).shape[:2] == (1, 1)


def test_prepare_crops_gives_rgb_chw_scaled_to_unit_range():
    image = np.zeros((50, 50, 3), np.uint8)
    image[..., 0] = 255  # blue in BGR
    crops = prepare_crops(image, np.array([[10, 10, 40, 30]], np.float32))
    assert crops.shape == (1, 3, CROP_HEIGHT, CROP_WIDTH) and crops.dtype == np.float32
    np.testing.assert_allclose(crops[0, 2], 127.5 * 0.0078125)  # blue is the last RGB channel
    np.testing.assert_allclose(crops[0, 0], -127.5 * 0.0078125)


def test_a_cut_wider_than_the_crop_is_averaged_not_sampled():
    # Stripes a pixel wide, as a large plate's thin strokes are to a 94 px crop: sampled every ~3.2 px (cubic) they
    # alias into bands of black and white (127.5 from grey); averaged, each crop pixel holds one or two white stripes
    # of its 3.2 (95 to 160).
    stripes = np.zeros((72, 300, 3), np.uint8)
    stripes[:, ::2] = 255
    crop = fit(stripes).astype(np.float32)
    assert crop.shape == (CROP_HEIGHT, CROP_WIDTH, 3)
    assert np.abs(crop - 127.5).max() < 40


@pytest.mark.parametrize("width", [40, 100, 141])
def test_a_cut_narrower_than_or_near_the_crop_is_resized_cubically(width):
    # 100 px is car.jpg's plate cut from the 1920x1080 frame: averaged, its C read O in most frames of a video
    rng = np.random.default_rng(0)
    cut = rng.integers(0, 256, (12, width, 3), np.uint8)
    assert np.array_equal(fit(cut), cv2.resize(cut, (CROP_WIDTH, CROP_HEIGHT), interpolation=cv2.INTER_CUBIC))


def test_a_cut_shrunk_more_than_the_threshold_is_averaged():
    rng = np.random.default_rng(0)
    cut = rng.integers(0, 256, (30, 142, 3), np.uint8)
    assert np.array_equal(fit(cut), cv2.resize(cut, (CROP_WIDTH, CROP_HEIGHT), interpolation=cv2.INTER_AREA))


def test_prepare_crops_of_no_boxes_is_an_empty_batch():
    crops = prepare_crops(np.zeros((10, 10, 3), np.uint8), np.zeros((0, 4), np.float32))
    assert crops.shape == (0, 3, CROP_HEIGHT, CROP_WIDTH)


def test_crop_box_widens_or_narrows_by_the_horizontal_margin():
    image = np.zeros((100, 200, 3), np.uint8)
    box = np.array([50, 40, 150, 60])
    assert crop_box(image, box, CropVariant(0.0, 0.1)).shape[:2] == (20, 120)
    assert crop_box(image, box, CropVariant(0.0, -0.1)).shape[:2] == (20, 80)


def test_prepare_crops_cuts_every_variant_of_a_box_before_the_next_box():
    image = np.zeros((100, 200, 3), np.uint8)
    image[:, 100:] = 255
    cuts = variants((0.2,), (0.0, 0.5))
    crops = prepare_crops(image, np.array([[20, 40, 60, 60], [120, 40, 160, 60]], np.float32), cuts)
    assert crops.shape == (4, 3, CROP_HEIGHT, CROP_WIDTH)
    # box 0 is black; its wide cut reaches nothing white (20..60 +- 20); box 1 is white
    assert crops[0].max() < 0 and crops[1].max() < 0 and crops[2].min() > 0 and crops[3].min() > 0


def _edge_photo(width: int, height: int) -> np.ndarray:
    image = np.full((height, width, 3), 60, np.uint8)
    image[:, width // 2 :] = 200
    return image


def test_cuts_map_boxes_onto_the_reference_frame():
    (cut,) = cut_crops(_edge_photo(960, 540), np.array([[10, 20, 30, 40]], np.float32), [CropVariant(0.0)])
    assert cut.shape[:2] == (40, 40)  # the box at twice the size: (20, 40, 60, 80)


def test_cuts_of_an_enlarged_photo_are_not_sharpened():
    # An unsharp mask would overshoot at the edge: darker than the dark side, brighter than the bright side.
    (enlarged,) = cut_crops(_edge_photo(500, 270), np.array([[240, 100, 260, 120]], np.float32))
    assert enlarged.min() >= 60 and enlarged.max() <= 200


def test_a_photo_at_the_reference_frame_is_cut_as_it_is():
    photo = _edge_photo(*REFERENCE_FRAME)
    cuts = cut_crops(photo, np.array([[900, 500, 1000, 540]], np.float32), DEFAULT_VARIANTS)
    assert all(np.shares_memory(cut, photo) for cut in cuts)


def test_a_neighbourhood_is_resized_from_whole_blocks_of_the_photo():
    # 780 px become 1920 in blocks of 13 that become 32; frame pixels 200..300 lie in blocks 6 to 9.
    assert _source_span(200, 300, 780, 1920) == (slice(78, 130), 192, 320)
    # 1300 px become 1920 in blocks of 65, but the start of some blocks rounds down: resized from the edge.
    assert _source_span(200, 300, 1300, 1920) == (slice(0, 260), 0, 384)


def assert_same_cuts(image, boxes):
    cuts, expected = cut_crops(image, boxes, DEFAULT_VARIANTS), whole_frame_cuts(image, boxes, DEFAULT_VARIANTS)
    assert len(cuts) == len(expected) == len(boxes) * len(DEFAULT_VARIANTS)
    for cut, whole in zip(cuts, expected):
        np.testing.assert_array_equal(cut, whole)


def test_neighbourhood_cuts_are_the_whole_frame_cuts_of_the_sample_car(samples):
    # The reference box, and the boxes the reference pipeline found (README of the shared data) mapped to the photo.
    found = np.array([[232, 814, 325, 842], [1097, 661, 1142, 674], [1520, 640, 1568, 653], [1286, 636, 1317, 645]])
    boxes = np.vstack([[[94, 331, 132, 342]], found * np.array([780 / 1920, 439 / 1080] * 2)])
    assert_same_cuts(read_image(samples / "car.jpg"), boxes)


@pytest.mark.parametrize(
    ("width", "height"),
    [
        (960, 540),  # enlarged 2x
        (500, 232),  # enlarged 3.8x and 4.7x
        (1600, 900),  # enlarged 1.2x
        (1300, 934),  # enlarged, with block starts that round down
        (1600, 1200),  # wider, and shorter
        (700, 1300),  # portrait: enlarged across, shrunk down
        (3840, 2160),  # shrunk 2x
        (4032, 3024),  # shrunk, with block starts that round down
        REFERENCE_FRAME,
    ],
)
def test_neighbourhood_cuts_are_the_whole_frame_cuts(width, height):
    noise = np.random.default_rng(0).integers(0, 256, (height, width, 3), np.uint8)  # any wrong sample shows
    boxes = np.array(
        [
            [0.4, 0.5, 0.5, 0.55],
            [0.0, 0.3, 0.1, 0.35],  # on the left edge
            [0.3, 0.0, 0.4, 0.02],  # on the top edge
            [0.9, 0.95, 1.0, 1.0],  # in the bottom right corner
            [-0.02, -0.01, 0.05, 0.03],  # over the top left corner
            [0.97, 0.2, 1.01, 0.23],  # over the right edge
            [0.6, 0.6, 0.601, 0.601],  # under a pixel of the photo
        ]
    ) * np.array([width, height] * 2)
    assert_same_cuts(noise, boxes)


@pytest.mark.parametrize("size", [(780, 439), (480, 480), (1600, 1200), REFERENCE_FRAME, (3840, 2160)])
def test_a_wide_cut_is_cut_shrunk_and_reads_as_the_frames_cut(samples, size):
    # car.jpg's plate and grille, 150 px of 780: 369 frame px wide, enlarged into the frame or shrunk.
    photo = cv2.resize(read_image(samples / "car.jpg"), size, interpolation=cv2.INTER_AREA)
    box = np.array([[40, 300, 190, 370]], np.float32) * np.array([size[0] / 780, size[1] / 439] * 2, np.float32)
    cuts, whole = cut_crops(photo, box, DEFAULT_VARIANTS), whole_frame_cuts(photo, box, DEFAULT_VARIANTS)
    assert min(cut.shape[1] for cut in cuts) == SHRUNK_CUT_WIDTH
    assert all(cut.shape[1] < frame_cut.shape[1] for cut, frame_cut in zip(cuts, whole))
    for cut, frame_cut in zip(cuts, whole):
        # What the reader is given: both averaged to 94x24, within a few levels of 255 of each other.
        assert np.abs(fit(cut).astype(int) - fit(frame_cut).astype(int)).mean() < 3
