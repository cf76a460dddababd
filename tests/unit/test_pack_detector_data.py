"""Packing a YOLO data set for the GPU machine: photos shrunk to WebP, labels beside them."""

from pathlib import Path

import pytest
from PIL import Image


@pytest.fixture
def script(convert_script):
    return convert_script("pack_detector_data")


def make_data_set(root: Path, train: int, val: int) -> None:
    root.mkdir()
    (root / "data.yaml").write_text("path: .\ntrain: images/train\nval: images/val\nnames: {0: plate}\n")
    for split, count in (("train", train), ("val", val)):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
        for n in range(count):
            Image.new("RGB", (1280, 720), (n * 20, 90, 160)).save(root / "images" / split / f"{split}{n}.jpg")
            (root / "labels" / split / f"{split}{n}.txt").write_text("0 0.5 0.5 0.1 0.05\n")


def test_photos_are_shrunk_to_webp_beside_their_labels(tmp_path, script):
    make_data_set(tmp_path / "data", train=4, val=4)
    pack = script.pack
    size = pack(tmp_path / "data", tmp_path / "out", 608, 65, processes=1, val_every=2)
    photos = sorted((tmp_path / "out").glob("images/*/*.webp"))
    assert size == sum(photo.stat().st_size for photo in photos)
    assert len(photos) == 4 + 2  # every train photo, every second val photo
    for photo in photos:
        assert Image.open(photo).size == (608, 342)
        label = photo.parents[2] / "labels" / photo.parent.name / f"{photo.stem}.txt"
        assert label.read_text() == "0 0.5 0.5 0.1 0.05\n"
    assert (tmp_path / "out" / "data.yaml").exists()


def test_a_folder_without_photos_is_named_and_refused(tmp_path, script):
    (tmp_path / "empty" / "images" / "train").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"empty: no photos under images/<split>: not a YOLO data set"):
        script.pack(tmp_path / "empty", tmp_path / "out", 608, 65, processes=1, val_every=1)
