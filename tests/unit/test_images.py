import numpy as np
import pytest

from plates.exceptions import InvalidInputError
from plates.photos.files import read_image
from plates.photos.pixels import check_image


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((10, 10, 3), np.float32), "must be UINT8, got float32"),
        (np.zeros((10, 10), np.uint8), r"shaped \[height, width, 3\].*got \[10, 10\]"),
        (np.zeros((10, 10, 4), np.uint8), r"got \[10, 10, 4\]"),
        (np.zeros((0, 10, 3), np.uint8), "sides between 1 and"),
        ([[1, 2, 3]], "must be a numpy array"),
    ],
)
def test_check_image_names_what_is_wrong(array, message):
    with pytest.raises(InvalidInputError, match=message):
        check_image(array)


def test_read_image_rejects_a_missing_file(tmp_path):
    with pytest.raises(InvalidInputError, match="no such file"):
        read_image(tmp_path / "absent.jpg")


def test_read_image_rejects_a_file_that_is_not_an_image(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("not a jpeg")
    with pytest.raises(InvalidInputError, match=f"{path} is not a JPEG or PNG image"):
        read_image(path)


def test_read_image_names_a_directory(tmp_path):
    with pytest.raises(InvalidInputError, match=f"{tmp_path}: is a directory, not a photo"):
        read_image(tmp_path)


def test_read_image_reads_a_sample_as_bgr(samples):
    image = read_image(samples / "car.jpg")
    assert image.shape == (439, 780, 3) and image.dtype == np.uint8
