"""The store's rules that need no database: fuzzy keys, a camera's direction, a track's motion, the site's options."""

from __future__ import annotations

import numpy as np
import pytest
import simplejpeg

from plates.client.service import Plate
from plates.exceptions import SettingsError
from plates.recognition.edits import plate_distance
from plates.store.fuzzy import keys, skeleton
from plates.store.sightings import direction
from plates.store.writer import cut_crop
from plates.watch.events import Reading, motion
from plates.watch.site import load_site


def test_look_alikes_share_a_skeleton():
    assert skeleton("B840CK197") == skeleton("8840OK197") == skeleton("B84OCX197")
    assert skeleton("B840CK197") != skeleton("B840CK198")


@pytest.mark.parametrize(
    "stored, searched",
    [
        ("A123BC77", "A123BC7"),  # a character missed
        ("A123BC77", "A123BC777"),  # one too many
        ("A123BC77", "A128BC77"),  # one wrong
        ("A123BC77", "4123B077"),  # look-alikes only, however many
        ("A123BC77", "4123BC7"),  # look-alikes and a character missed
    ],
)
def test_plates_within_one_edit_beyond_look_alikes_share_a_key(stored, searched):
    assert keys(stored) & keys(searched)


def test_plates_two_edits_apart_share_no_key():
    assert not keys("A123BC77") & keys("A128BK77")
    assert plate_distance("A123BC77", "A128BK77") == 2


@pytest.mark.parametrize(
    "role, motion_, entry, expected",
    [
        ("entrance", None, "towards", "in"),
        ("exit", "towards", "towards", "out"),
        ("both", "towards", "towards", "in"),
        ("both", "away", "towards", "out"),
        ("both", "away", "away", "in"),
        ("both", None, "towards", None),
        ("none", "towards", "towards", None),
    ],
)
def test_a_cameras_role_and_the_tracks_motion_give_the_direction(role, motion_, entry, expected):
    assert direction(role, motion_, entry) == expected


def test_an_unknown_role_is_a_settings_error():
    with pytest.raises(SettingsError, match="role must be one of"):
        direction("gate", None)


def _reading(box: list[float]) -> Reading:
    return Reading(0, 0.0, 0.0, Plate(box=box, score=0.9, text="A123BC77", text_score=0.9))


def test_a_growing_plate_comes_towards_the_camera_and_a_shrinking_one_goes_away():
    small, large = [100, 100, 140, 110], [90, 150, 170, 170]
    assert motion([_reading(small), _reading(large)]) == "towards"
    assert motion([_reading(large), _reading(small)]) == "away"
    assert motion([_reading(small), _reading([101, 101, 141, 111])]) is None


def test_a_site_file_gives_roles_start_times_and_its_store(tmp_path):
    site_file = tmp_path / "site.yaml"
    site_file.write_text(
        "store: site.db\noverstay_after: 120\ncameras:\n"
        "  - {camera_id: in, source: a.mp4, role: entrance, start: '2026-11-28T08:00:00Z'}\n"
        "  - {camera_id: out, source: b.mp4, role: both, entry_motion: away}\n"
    )
    site = load_site(site_file)
    assert site.store == str(tmp_path / "site.db") and site.overstay_after == 120
    assert [c.role for c in site.cameras] == ["entrance", "both"]
    assert site.cameras[0].start_time() == 1795852800.0


@pytest.mark.parametrize(
    "body, message",
    [
        ("cameras:\n  - {camera_id: a, source: a.mp4, role: entrance}\n", "no store keeps them"),
        ("store: s.db\ncameras:\n  - {camera_id: a, source: a.mp4, role: gate}\n", "role must be one of"),
        ("store: s.db\ncameras:\n  - {camera_id: a, source: a.mp4, start: yesterday}\n", "no ISO 8601 time"),
        ("store: s.db\noverstay_after: 0\ncameras:\n  - {camera_id: a, source: a.mp4}\n", "above 0 minutes"),
    ],
)
def test_a_bad_visit_setting_names_the_option(tmp_path, body, message):
    site_file = tmp_path / "site.yaml"
    site_file.write_text(body)
    with pytest.raises(SettingsError, match=message):
        load_site(site_file)


def test_a_crops_folder_that_cannot_be_made_is_a_settings_error(tmp_path):
    from plates.store.database import Store
    from plates.store.writer import StoreWriter

    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(SettingsError, match="store_crops .*file/crops: cannot create it"):
        StoreWriter(Store(str(tmp_path / "site.db")), crops=tmp_path / "file" / "crops")


def test_a_crop_is_cut_from_the_photo_at_its_box_and_kept_inside_it():
    pixels = np.zeros((100, 200, 3), np.uint8)
    pixels[40:60, 50:150] = 255  # the plate
    photo = simplejpeg.encode_jpeg(pixels, 95, colorspace="BGR")
    crop = simplejpeg.decode_jpeg(cut_crop(photo, [50, 40, 150, 60], margin=0), colorspace="BGR")
    assert crop.shape == (21, 101, 3) and crop[1:-1, 1:-1].min() > 200
    assert simplejpeg.decode_jpeg_header(cut_crop(photo, [-30, 90, 20, 130]))[:2] == (14, 25)  # clipped at the edges
    assert cut_crop(photo, [300, 10, 350, 20]) is None  # outside the photo
    assert cut_crop(b"\xff\xd8 not a photo", [0, 0, 10, 10]) is None
