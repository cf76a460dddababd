import numpy as np

from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH, crop_box, prepare_crops


def test_crop_box_pads_vertically_by_a_fifth_of_the_height():
    image = np.zeros((100, 200, 3), np.uint8)
    crop = crop_box(image, np.array([50, 40, 150, 60]), vertical_pad=0.2)
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
