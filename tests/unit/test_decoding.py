import io

import cv2
import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.io import decode_jpeg

from plates.exceptions import InvalidInputError
from plates.inference.photo_decoding import bgr, decode_image
from plates.photos.headers import read_header
from plates.photos.pixels import MAX_SIDE

CPU = torch.device("cpu")


def encode(image: np.ndarray, ext: str = ".jpg") -> bytes:
    return cv2.imencode(ext, image)[1].tobytes()


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """A BGR photo with different colours in each corner, so a flip or a channel swap shows."""
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (40, 64, 3), dtype=np.uint8)
    image[:10, :10] = (255, 0, 0)
    return image


@pytest.mark.parametrize("ext", [".jpg", ".png"])
def test_decode_image_gives_the_pixels_cv2_gives(photo, ext):
    data = encode(photo, ext)
    decoded = decode_image(data, CPU)
    assert decoded.dtype == torch.uint8 and decoded.device == CPU
    np.testing.assert_array_equal(decoded.numpy(), cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR))


def test_decode_image_reads_car_jpg_as_cv2_reads_it(samples):
    data = (samples / "car.jpg").read_bytes()
    np.testing.assert_array_equal(decode_image(data, CPU).numpy(), cv2.imread(str(samples / "car.jpg")))


def test_decode_image_gives_grey_and_16_bit_pngs_three_8_bit_channels(photo):
    grey = decode_image(encode(photo[:, :, 0], ".png"), CPU).numpy()
    assert grey.shape == (40, 64, 3) and (grey[:, :, 0] == photo[:, :, 0]).all()
    deep = decode_image(encode(photo.astype(np.uint16) * 257, ".png"), CPU).numpy()
    np.testing.assert_array_equal(deep, photo)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_decode_image_turns_a_jpeg_upright_as_its_exif_says(photo, orientation):
    buffer = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(photo[:, :, ::-1]).save(buffer, "JPEG", exif=exif, quality=95)
    data = buffer.getvalue()
    expected = decode_jpeg(torch.frombuffer(bytearray(data), dtype=torch.uint8), apply_exif_orientation=True)
    decoded = decode_image(data, CPU)
    np.testing.assert_array_equal(decoded.numpy(), expected.permute(1, 2, 0).flip(2).numpy())
    assert decoded.is_contiguous()  # turned photos are strided views until the channel swap copies them
    assert read_header(data).orientation == orientation


def test_bgr_swaps_the_channels_of_any_layout_on_the_cpu_and_elsewhere(photo):
    rgb = torch.from_numpy(photo[:, :, ::-1].copy()).permute(2, 0, 1)  # CHW over HWC memory, as torchvision gives
    for chw in (rgb, rgb.contiguous(), rgb.transpose(1, 2)):
        swapped = bgr(chw)
        assert swapped.is_contiguous()
        np.testing.assert_array_equal(swapped.numpy(), chw.permute(1, 2, 0).flip(2).numpy())
    # Off the CPU (a GPU's decode) the swap stays on the device: the meta device runs that path without one.
    assert bgr(rgb.to("meta")).shape == (40, 64, 3) and bgr(rgb.to("meta")).device.type == "meta"


@pytest.mark.parametrize("share", [0.3, 0.9, 0.999])
def test_decode_image_rejects_a_truncated_jpeg(samples, share):
    data = (samples / "car.jpg").read_bytes()
    with pytest.raises(InvalidInputError, match="photo is a truncated JPEG"):
        decode_image(data[: int(len(data) * share)], CPU, "photo")


def test_decode_image_rejects_a_truncated_png_that_cv2_would_half_decode(photo):
    data = encode(photo, ".png")
    with pytest.raises(InvalidInputError, match="photo is a corrupt or truncated PNG"):
        decode_image(data[: len(data) // 2], CPU, "photo")


def test_decode_image_rejects_a_jpeg_with_a_corrupt_huffman_table(samples):
    data = bytearray((samples / "car.jpg").read_bytes())
    table = data.find(b"\xff\xc4")
    data[table + 5 : table + 21] = b"\xff" * 16  # code counts no Huffman table can have
    # libjpeg-turbo finds it reading the header, before any scan: it cannot tell the subsampling from that table.
    with pytest.raises(InvalidInputError, match="photo is a corrupt or truncated JPEG: .*subsampling"):
        decode_image(bytes(data), CPU, "photo")


def test_decode_image_rejects_a_jpeg_cut_short_with_an_end_of_image_marker_appended(samples):
    data = (samples / "car.jpg").read_bytes()
    with pytest.raises(InvalidInputError, match="photo is a corrupt or truncated JPEG: Corrupt JPEG data"):
        decode_image(data[: int(len(data) * 0.3)] + b"\xff\xd9", CPU, "photo")


@pytest.mark.parametrize("seed", range(5))
def test_decode_image_rejects_a_jpeg_with_random_bytes_in_its_middle(samples, seed):
    data = bytearray((samples / "car.jpg").read_bytes())
    middle = len(data) // 2
    data[middle : middle + 2000] = np.random.default_rng(seed).integers(0, 256, 2000, dtype=np.uint8).tobytes()
    with pytest.raises(InvalidInputError, match="photo is a corrupt or truncated JPEG"):
        decode_image(bytes(data), CPU, "photo")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "photo is empty"),
        (b"plain text, not a photo", r"photo is not a JPEG or PNG image \(23 bytes\)"),
        (b"\xff\xd8\xff\xe0", "photo is not a JPEG or PNG image"),
    ],
)
def test_read_header_names_bytes_that_are_no_photo(data, message):
    with pytest.raises(InvalidInputError, match=message):
        read_header(data, "photo")


def test_read_header_rejects_a_format_other_than_jpeg_and_png(photo):
    with pytest.raises(InvalidInputError, match="photo is a BMP image: only JPEG and PNG are supported"):
        read_header(encode(photo, ".bmp"), "photo")


@pytest.mark.parametrize("ext", [".jpg", ".png"])
def test_decode_image_rejects_a_photo_too_large_from_its_header(monkeypatch, ext):
    data = encode(np.zeros((2, MAX_SIDE + 1, 3), np.uint8), ext)

    def never(*args, **kwargs):
        raise AssertionError("the pixels were decoded")

    monkeypatch.setattr("plates.photos.decoding.simplejpeg.decode_jpeg", never)
    monkeypatch.setattr("plates.photos.decoding.decode_png", never)
    message = f"photo must have sides between 1 and {MAX_SIDE} pixels, got {MAX_SIDE + 1}x2"
    with pytest.raises(InvalidInputError, match=message):
        decode_image(data, CPU, "photo")
