import numpy as np

from plates.recognition.crops import (
    CROP_HEIGHT,
    CROP_WIDTH,
    REFERENCE_FRAME,
    CropVariant,
    crop_box,
    prepare_crops,
    to_reference_frame,
    variants,
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


def test_reference_frame_maps_boxes_with_the_photo():
    frame, boxes = to_reference_frame(_edge_photo(960, 540), np.array([[10, 20, 30, 40]], np.float32))
    assert frame.shape[:2] == (REFERENCE_FRAME[1], REFERENCE_FRAME[0])
    np.testing.assert_allclose(boxes, [[20, 40, 60, 80]])


def test_reference_frame_sharpens_a_photo_enlarged_twice_or_more_and_only_that():
    # Unsharp masking overshoots at an edge: darker than the dark side, brighter than the bright side.
    enlarged, _ = to_reference_frame(_edge_photo(960, 540), np.zeros((0, 4), np.float32))
    assert enlarged.min() < 60 and enlarged.max() > 200
    mildly_enlarged, _ = to_reference_frame(_edge_photo(1600, 900), np.zeros((0, 4), np.float32))
    assert mildly_enlarged.min() >= 60 and mildly_enlarged.max() <= 200
