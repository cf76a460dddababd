"""Photos sent as their files (`image_bytes`), which the server decodes, against the same photos sent as pixels."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from plates.cli.client import main
from plates.client.readiness import is_ready
from plates.client.service import PlatesClient
from plates.exceptions import InvalidInputError
from plates.photos.files import read_image
from plates.photos.pixels import MAX_SIDE

# car.jpg, cat.jpeg (no plate), val photos (ds_206 is a phone's MPO), and e2e.json photos from the train split.
PHOTOS = [
    "samples/car.jpg",
    "samples/cat.jpeg",
    "detect/images/val/ds_206.jpg",
    "detect/images/val/ds_035.jpg",
    "detect/images/train/ds_154.jpg",
    "detect/images/train/ds_144.jpg",
]


@pytest.mark.parametrize("photo", PHOTOS)
def test_photo_sent_as_its_file_reads_as_its_pixels(triton_url, samples, photo):
    path = samples.parent / photo
    # The pixels are those of the server's own decoder (read_image decodes with plates.photos.decoding on the CPU). On
    # this project's photos they equal cv2.imread's bit for bit (all 93 val photos: torchvision's and OpenCV
    # 4.10's libjpeg-turbo agree), but another libjpeg, or nvJPEG on a GPU, may differ by a level here and there,
    # enough to tip a close plate such as car.jpg's C/O.
    with PlatesClient(triton_url) as client:
        from_file = client.recognize(path.read_bytes())
        from_pixels = client.recognize(read_image(path))
    assert from_file == from_pixels


def test_truncated_photo_is_refused_naming_it_and_the_server_stays_ready(triton_url, samples, tmp_path, capsys):
    data = (samples / "car.jpg").read_bytes()
    with PlatesClient(triton_url) as client, pytest.raises(InvalidInputError, match="image_bytes is a truncated JPEG"):
        client.recognize(data[: len(data) * 3 // 10])
    photo = tmp_path / "cut.jpg"
    photo.write_bytes(data[: len(data) * 3 // 10])
    assert main([str(photo), "--url", triton_url]) == InvalidInputError.exit_code
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"error: {photo}: server rejected the image:"), captured
    assert "truncated JPEG" in captured.err and len(captured.err.splitlines()) == 1
    assert is_ready(triton_url)


def cut_with_end_marker(data: bytes) -> bytes:
    return data[: len(data) * 3 // 10] + b"\xff\xd9"


def random_bytes_in_middle(data: bytes) -> bytes:
    middle, damaged = len(data) // 2, bytearray(data)
    damaged[middle : middle + 2000] = np.random.default_rng(1).integers(0, 256, 2000, dtype=np.uint8).tobytes()
    return bytes(damaged)


@pytest.mark.parametrize("damage", [cut_with_end_marker, random_bytes_in_middle])
@pytest.mark.parametrize("raw", [False, True], ids=["file", "raw"])
def test_corrupt_photo_is_an_error_naming_the_file_never_no_plates(triton_url, samples, tmp_path, capsys, damage, raw):
    photo = tmp_path / "corrupt.jpg"
    photo.write_bytes(damage((samples / "car.jpg").read_bytes()))
    assert main([str(photo), "--url", triton_url, *(["--raw"] if raw else [])]) == InvalidInputError.exit_code
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"error: {photo}"), captured
    assert "corrupt or truncated JPEG" in captured.err and len(captured.err.splitlines()) == 1
    assert is_ready(triton_url)


def bytes_input(data: bytes) -> httpclient.InferInput:
    tensor = httpclient.InferInput("image_bytes", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([data], dtype=np.object_))
    return tensor


def corrupt_png() -> bytes:
    data = bytearray(cv2.imencode(".png", np.random.default_rng(0).integers(0, 256, (60, 80, 3), np.uint8))[1])
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
    return bytes(data)


def pixels_input() -> httpclient.InferInput:
    tensor = httpclient.InferInput("input__0", [20, 30, 3], "UINT8")
    tensor.set_data_from_numpy(np.zeros((20, 30, 3), np.uint8))
    return tensor


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (lambda: [], "send exactly one of input__0 .* and image_bytes .*, got neither"),
        (lambda: [pixels_input(), bytes_input(b"\xff\xd8")], "got both"),
        (lambda: [bytes_input(b"GIF89a, or so it says")], "image_bytes is not a JPEG or PNG image"),
        (lambda: [bytes_input(cv2.imencode(".bmp", np.zeros((4, 4, 3), np.uint8))[1].tobytes())], "a BMP image"),
        (
            lambda: [bytes_input(cv2.imencode(".jpg", np.zeros((2, MAX_SIDE + 1, 3), np.uint8))[1].tobytes())],
            f"image_bytes must have sides between 1 and {MAX_SIDE} pixels",
        ),
        # Its header reads; yolo, which decodes it, finds it corrupt, and Triton hands yolo's error on as INTERNAL.
        (lambda: [bytes_input(corrupt_png())], "plate_recognition: image_bytes is a corrupt or truncated PNG"),
    ],
)
def test_bad_photo_file_gets_a_400_naming_the_fault(triton_url, http_client, inputs, message):
    with pytest.raises(InferenceServerException, match=message) as error:
        http_client.infer("plate_recognition", inputs())
    assert str(error.value.status()) == "400", error.value.message()
    assert is_ready(triton_url)
