"""Plates read by eye: the typed lines, the sheets they are read from, the label files, and the rule that no label is
of a photo the project measures itself on."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from plates.build.paths import shared_dir
from plates.training.by_eye import (
    Label,
    ReadingError,
    Tile,
    hint_of_crop,
    load_labels,
    parse_line,
    parse_readings,
    save_labels,
    sheet,
)
from plates.training.real_plates import (
    check_trainable,
    held_out_looks,
    held_out_photos,
    look_hash,
    real_plates,
    split_of,
)

LABELS = sorted(Path("labels").glob("*.json"))
DATA = shared_dir() / "data"


@pytest.mark.parametrize(
    "line, parsed",
    [
        ("c0012 A001PY177", ("c0012", "read", "A001PY177", 1)),
        ("c0012 а001ру177", ("c0012", "read", "A001PY177", 1)),  # Cyrillic, lower case: the Latin look-alikes
        ("c0013 doubt A0?1PY17?", ("c0013", "doubt", "A0?1PY17?", 1)),
        ("c0014 illegible  # too small", ("c0014", "illegible", None, 1)),
        ("c0015 foreign", ("c0015", "foreign", None, 1)),
        ("c0016 notplate", ("c0016", "notplate", None, 1)),
        ("c0017 twoline 1234AB50", ("c0017", "read", "1234AB50", 2)),
        ("c0018 twoline doubt 12?4AB50", ("c0018", "doubt", "12?4AB50", 2)),
        ("   # a comment", None),
        ("", None),
    ],
)
def test_parse_line_takes_each_form(line, parsed):
    assert parse_line(line) == parsed


@pytest.mark.parametrize(
    "line, message",
    [
        ("c0001 YESBOSS", "no Russian plate format"),
        ("c0001 doubt A001PY177", "'\\?' for each character in doubt"),
        ("c0001 doubt A0?1PZ177", "'\\?' for each character in doubt"),
        ("c0001 illegible A001PY177", "illegible takes no text"),
        ("c0001", "a text, or one of"),
        ("c0001 A001 PY177", "one text, with no spaces"),
    ],
)
def test_parse_line_refuses_what_is_not_a_reading(line, message):
    with pytest.raises(ReadingError, match=message):
        parse_line(line)


def test_parse_readings_keys_labels_by_photo_and_box_and_refuses_a_tile_read_twice():
    tiles = {"s0001": Tile("s0001", "rfplates/scenes/images/a.jpg", (1.0, 2.0, 30.0, 9.0))}
    (label,) = parse_readings("s0001 A001PY177\n", tiles)
    assert label == Label("rfplates/scenes/images/a.jpg", (1.0, 2.0, 30.0, 9.0), "read", "A001PY177")
    with pytest.raises(ReadingError, match="read twice"):
        parse_readings("s0001 A001PY177\ns0001 illegible\n", tiles)
    with pytest.raises(ReadingError, match="no tile s0002"):
        parse_readings("s0002 illegible\n", tiles)


def test_labels_round_trip_through_their_file(tmp_path):
    labels = [
        Label("crops/a.jpg", None, "read", "A001PY177"),
        Label("scenes/b.jpg", (1.0, 2.0, 3.0, 4.0), "doubt", "A0?1PY17?"),
        Label("scenes/b.jpg", (5.0, 6.0, 7.0, 8.0), "read", "1234AB50", lines=2),
    ]
    save_labels(labels, tmp_path / "l.json", {"source": "test"})
    assert load_labels(tmp_path / "l.json") == labels
    assert [p.text for p in real_plates(labels, tmp_path, lines=(1,))] == ["A001PY177"]


def test_sheet_shows_each_plate_under_its_id(tmp_path):
    photo = np.full((100, 200, 3), 255, np.uint8)
    photo[40:60, 50:150] = 0
    cv2.imwrite(str(tmp_path / "p.png"), photo)
    picture = sheet([Tile("s0001", "p.png", (50.0, 40.0, 150.0, 60.0)), Tile("s0002", "p.png", None)], tmp_path)
    assert picture.shape == (150, 1000, 3)
    assert (picture[40:140, 20:400] < 50).mean() > 0.2  # the plate, enlarged, fills much of its tile


def test_hint_of_crop_is_the_file_names_text():
    assert hint_of_crop("crops/B605BY-197_bmp.rf.0a1b.jpg") == "B605BY197"


def test_split_of_a_text_is_fixed_and_mostly_train():
    texts = [f"A{n:03d}AA77" for n in range(1000)]
    splits = [split_of(text) for text in texts]
    assert splits == [split_of(text) for text in texts]
    assert 0.05 < splits.count("test") / 1000 < 0.15 and 0.05 < splits.count("val") / 1000 < 0.15


def test_check_trainable_refuses_a_held_out_photo_and_a_copy_of_one(tmp_path):
    photo = np.random.default_rng(0).integers(0, 256, (60, 80, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "held.png"), photo)
    cv2.imwrite(str(tmp_path / "copy.jpg"), cv2.resize(photo, (160, 120)))  # renamed, resized, re-encoded
    cv2.imwrite(str(tmp_path / "other.png"), photo[:, ::-1])
    looks = look_hash(tmp_path / "held.png")[None]
    check_trainable([Label("other.png", None, "read", "A001PY177")], tmp_path, set(), looks)
    for image, held in (("copy.jpg", set()), ("held.png", {"held.png"}), ("detect/images/val/x.png", set())):
        with pytest.raises(ValueError, match="never trained on"):
            check_trainable([Label(image, None, "read", "A001PY177")], tmp_path, held, looks)


@pytest.mark.skipif(not (DATA / "e2e.json").is_file() or not LABELS, reason="needs the shared data and labels/")
def test_no_label_is_of_a_photo_the_project_measures_itself_on():
    labels = [label for path in LABELS for label in load_labels(path)]
    detect, e2e = DATA / "detect", DATA / "e2e.json"
    check_trainable(labels, DATA, held_out_photos(detect, e2e), held_out_looks(detect, e2e))
    assert len(labels) > 3000
