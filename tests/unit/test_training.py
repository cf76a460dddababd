"""The recognizer's training code: synthetic plates, augmentation, the data it may use, and a tiny training run that
stops and resumes. No real training is run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from plates.build.paths import shared_dir
from plates.nets import LPRNet, SpatialTransformer
from plates.recognition.alphabet import LETTERS
from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH, normalize
from plates.recognition.formats import plate_format
from plates.recognition.regions import REGIONS
from plates.training import synthetic
from plates.training.augment import real_crop, synthetic_crop
from plates.training.dataset import CropSet, encode, synthetic_set, to_tensor
from plates.training.real_plates import held_out_looks, held_out_photos, is_held_out_copy, training_photos
from plates.training.trainer import TrainSettings, train

SHARED_DATA = shared_dir() / "data"
needs_font = pytest.mark.skipif(not synthetic.FONT_PATH.is_file(), reason="needs the shared fonts/")


@pytest.mark.parametrize("style", sorted(synthetic.STYLES))
def test_random_text_is_a_plate_of_its_format(style):
    rng = np.random.default_rng(0)
    for _ in range(200):
        text = synthetic.random_text(style, rng)
        # The first format that fits wins in plates.recognition.formats: trailer AB1231 77 reads as taxi AB123 177.
        allowed = {"trailer": {"trailer", "taxi"}}.get(style, {style})
        assert plate_format(text) in allowed, text


def test_region_codes_are_mostly_issued_ones_and_some_any_code():
    rng = np.random.default_rng(0)
    codes = [synthetic.random_region(rng) for _ in range(2000)]
    issued = sum(code in REGIONS for code in codes) / len(codes)
    # 0.9 drawn from REGIONS; of the rest, any two-digit code but a few, and one three-digit code in six, is issued
    assert 0.93 < issued < 0.98
    assert len({code for code in codes if code not in REGIONS}) > 30
    assert all(plate_format("A123BC" + code) == "private" for code in codes)


def test_letters_are_drawn_evenly():
    rng = np.random.default_rng(0)
    letters = Counter(c for _ in range(3000) for c in synthetic.random_text("private", rng)[:6] if c in LETTERS)
    assert set(letters) == set(LETTERS)
    assert max(letters.values()) / min(letters.values()) < 1.25


@needs_font
@pytest.mark.parametrize("style", sorted(synthetic.STYLES))
def test_render_plate_draws_ink_in_the_plate_colours(style):
    plate = synthetic.render_plate(
        synthetic.random_text(style, np.random.default_rng(1)), style, np.random.default_rng(2)
    )
    assert plate.shape == (224, 1040, 3) and plate.dtype == np.uint8
    grey = cv2.cvtColor(plate, cv2.COLOR_BGR2GRAY)
    assert grey.std() > 30  # characters on a plain background, not a blank plate


@needs_font
def test_synthetic_crops_are_the_recognizer_size_and_seeded():
    backgrounds = [np.full((200, 300, 3), 90, np.uint8)]
    first = synthetic_set(6, seed=3, backgrounds=backgrounds, processes=1)
    again = synthetic_set(6, seed=3, backgrounds=backgrounds, processes=1)
    assert first.images.shape == (6, CROP_HEIGHT, CROP_WIDTH, 3)
    assert first.texts == again.texts and np.array_equal(first.images, again.images)
    assert synthetic_set(6, seed=4, backgrounds=backgrounds, processes=1).texts != first.texts


@needs_font
def test_a_two_line_share_of_one_makes_every_synthetic_plate_two_line():
    backgrounds = [np.full((200, 300, 3), 90, np.uint8)]
    rows = synthetic_set(8, seed=3, backgrounds=backgrounds, processes=1, layout="rows", two_line_share=1.0)
    assert rows.lines.tolist() == [2] * 8 and rows.images.shape == (8, CROP_HEIGHT, 2 * CROP_WIDTH, 3)
    assert all(plate_format(text) for text in rows.texts)
    assert 1 in synthetic_set(8, seed=3, backgrounds=backgrounds, processes=1, layout="rows").lines  # the default


@needs_font
def test_synthetic_crop_holds_the_plate_between_its_pads():
    rng = np.random.default_rng(5)
    plate = np.zeros((224, 1040, 3), np.uint8)  # a black plate on white backgrounds: where is it cut?
    crops = [synthetic_crop(plate, rng, [np.full((100, 100, 3), 255, np.uint8)]) for _ in range(30)]
    dark = np.mean([(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY) < 128).mean() for c in crops])
    assert 0.3 < dark < 0.95  # mostly plate, with some of its surroundings: as a detector's box is cut


def test_real_crop_cuts_the_box_region():
    photo = np.full((1080, 1920, 3), 255, np.uint8)
    photo[500:540, 800:960] = 0
    crop = real_crop(photo, np.array([800, 500, 960, 540], np.float32), np.random.default_rng(0))
    assert crop.shape == (CROP_HEIGHT, CROP_WIDTH, 3)
    assert (cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)[8:16, 30:60] < 128).mean() > 0.5


def test_to_tensor_normalizes_as_the_served_pipeline():
    images = np.random.default_rng(0).integers(0, 256, (3, CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8)
    expected = np.stack([normalize(image) for image in images])
    assert np.array_equal(to_tensor(images).numpy(), expected)


def test_encode_concatenates_class_indices():
    targets, lengths = encode(["A1", "0"])
    assert targets.tolist() == [10, 1, 0] and lengths.tolist() == [2, 1]


def _detect_folder(root: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    for split, names in (("train", ["a", "b", "c", "copy-of-v"]), ("val", ["v"])):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
        for name in names:
            photo = rng.integers(0, 256, (40, 80, 3), np.uint8)
            cv2.imwrite(str(root / "images" / split / f"{name}.png"), photo)
    cv2.imwrite(str(root / "images" / "train" / "copy-of-v.png"), cv2.imread(str(root / "images" / "val" / "v.png")))
    for split, names in (("train", ["a", "b", "c", "copy-of-v"]), ("val", ["v"])):
        for name in names:
            (root / "labels" / split / f"{name}.txt").write_text("0 0.5 0.5 0.5 0.25\n")
    manifest = root / "e2e.json"
    manifest.write_text(json.dumps([{"image": "images/train/b.png", "plates": [], "text": "A123BC77"}]))
    return root, manifest


def test_training_photos_leave_out_e2e_and_val_photos_and_their_copies(tmp_path):
    detect, manifest = _detect_folder(tmp_path)
    assert held_out_photos(detect, manifest) == {"b.png", "v.png"}
    photos = list(training_photos(detect, manifest))
    assert [p.name for p, _ in photos] == ["a.png", "c.png"]
    assert photos[0][1] == [(20.0, 15.0, 60.0, 25.0)]


@pytest.mark.skipif(not (SHARED_DATA / "e2e.json").is_file(), reason="needs the shared data")
def test_no_photo_of_e2e_or_val_nor_a_copy_of_one_is_a_training_photo():
    detect, manifest = SHARED_DATA / "detect", SHARED_DATA / "e2e.json"
    held_out = held_out_photos(detect, manifest)
    assert len(held_out) == 93 + 65  # the val split, and e2e.json's photos from the train split
    photos = [photo for photo, _ in training_photos(detect, manifest)]
    assert not {photo.name for photo in photos} & held_out
    looks = held_out_looks(detect, manifest)
    assert not any(is_held_out_copy(photo, looks) for photo in photos)
    assert len(photos) == 368 - 30  # the train split's photos with plates less e2e's, less 30 copies of held-out ones


def test_training_writes_checkpoints_and_resumes(tmp_path):
    rng = np.random.default_rng(0)
    data = CropSet(rng.integers(0, 256, (8, CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8), ["A123BC77"] * 8)
    settings = TrainSettings(epochs=1, batch_size=4, synthetic_per_epoch=4, warmup_steps=1)
    lines: list[str] = []
    history = train(SpatialTransformer(), LPRNet(), data, data, {"val": data}, tmp_path, settings, lines.append)
    assert [h["epoch"] for h in history] == [1] and (tmp_path / "best.pt").is_file()
    first = torch.load(tmp_path / "last.pt", weights_only=False)["lprnet"]

    more = TrainSettings(epochs=2, batch_size=4, synthetic_per_epoch=4, warmup_steps=1)
    lprnet = LPRNet()
    history = train(SpatialTransformer(), lprnet, data, data, {"val": data}, tmp_path, more, lines.append)
    assert [h["epoch"] for h in history] == [1, 2]
    assert any(line.startswith("resumed from") for line in lines)
    assert any(line.startswith("epoch 2: loss") and "val: " in line for line in lines)
    assert not torch.equal(first["container.weight"], lprnet.state_dict()["container.weight"])
