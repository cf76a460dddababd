"""The detector's training scenes: the photos they may come from and their split, rendered plates drawn into photos,
real close-ups, and the YOLO set written to disk. Small photos made here; no server."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from plates.evaluation.manifests import load_json_manifest, load_yolo
from plates.evaluation.scoring import iou
from plates.training import scene_photos, scene_set, scenes, synthetic
from plates.training.by_eye import Label
from plates.training.real_plates import look_hash, split_of

needs_font = pytest.mark.skipif(not synthetic.FONT_PATH.is_file(), reason="needs the shared fonts/")


def _street(seed: int, width: int = 640, height: int = 400) -> np.ndarray:
    """A photo-like picture: smooth shading and texture of its own (so that look hashes differ)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(40, 200, (6, 8, 3)).astype(np.uint8)
    image = cv2.resize(small, (width, height), interpolation=cv2.INTER_CUBIC)
    return np.clip(image + rng.normal(0, 4, image.shape), 0, 255).astype(np.uint8)


def _with_plate(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x1, y1, x2, y2 = box
    image = image.copy()
    image[y1:y2, x1:x2] = 225
    cv2.putText(image, "A123BC", (x1 + 4, y2 - 6), cv2.FONT_HERSHEY_SIMPLEX, (y2 - y1) / 40, (20, 20, 20), 2)
    return image


def _photo(folder: Path, name: str, seed: int, boxes=((250, 250, 370, 280),), lines=1, text=None) -> scene_photos.Photo:
    image = _street(seed)
    for box in boxes:
        image = _with_plate(image, box)
    path = folder / name
    cv2.imwrite(str(path), image)
    plates = tuple(scene_photos.ScenePlate(tuple(float(v) for v in box), lines, text) for box in boxes)
    return scene_photos.Photo(path, plates, look_hash(path))


# Photos and their split


def _yolo_images(images: Path, labels: Path, photos: dict[str, np.ndarray]) -> None:
    """Photos in `images`, each with a plate box in its label file in `labels`."""
    images.mkdir(parents=True)
    labels.mkdir(parents=True)
    for name, image in photos.items():
        cv2.imwrite(str(images / name), image)
        (labels / name).with_suffix(".txt").write_text("0 0.5 0.5 0.2 0.1\n")


def test_load_photos_leaves_out_held_out_photos_and_their_copies_and_reads_lines_by_eye(tmp_path):
    detect, rfplates = tmp_path / "detect", tmp_path / "rf"
    _yolo_images(detect / "images/train", detect / "labels/train", {"a.png": _street(1), "held.png": _street(2)})
    _yolo_images(detect / "images/val", detect / "labels/val", {"v.png": _street(3)})
    e2e = tmp_path / "e2e.json"
    e2e.write_text(json.dumps([{"image": "detect/images/train/held.png", "plates": [], "text": "A123BC77"}]))
    _yolo_images(
        rfplates / "images",
        rfplates / "labels",
        {"r1_jpg.rf.x.png": _street(7), "r2_jpg.rf.y.png": _street(8), "copy_jpg.rf.z.png": _street(3)},
    )
    labels = [
        Label("rf/images/r1_jpg.rf.x.png", (256.0, 180.0, 384.0, 220.0), "read", "A001AA77", lines=2),
        Label("rf/images/r2_jpg.rf.y.png", (256.0, 180.0, 384.0, 220.0), "notplate"),
    ]
    photos = scene_photos.load_photos(detect, rfplates, e2e, labels, tmp_path, log=lambda line: None)
    by_name = {photo.path.name: photo for photo in photos}
    assert set(by_name) == {"a.png", "r1_jpg.rf.x.png", "r2_jpg.rf.y.png"}  # no held-out photo, no copy of one
    assert [(p.lines, p.text, p.cls) for p in by_name["r1_jpg.rf.x.png"].plates] == [(2, "A001AA77", 1)]
    assert by_name["r2_jpg.rf.y.png"].plates == ()  # read by eye as no plate
    assert [(p.lines, p.text) for p in by_name["a.png"].plates] == [(1, None)]


def test_photo_groups_join_one_photos_names_its_copies_and_its_cars(tmp_path):
    photos = [
        _photo(tmp_path, "car_jpg.rf.aaa.jpg", 1),
        _photo(tmp_path, "car_jpg.rf.bbb.jpg", 2),  # the same photo, another export
        _photo(tmp_path, "x.jpg", 3, text="A001AA77"),
        _photo(tmp_path, "y.jpg", 4, text="A001AA77"),  # the same car
        _photo(tmp_path, "z.jpg", 5),
        _photo(tmp_path, "z-copy.jpg", 6),
        _photo(tmp_path, "alone.jpg", 7),
    ]
    cv2.imwrite(str(photos[5].path), cv2.imread(str(photos[4].path)))  # a copy under another name
    photos[5] = scene_photos.Photo(photos[5].path, photos[5].plates, look_hash(photos[5].path))
    groups = scene_photos.photo_groups(photos)
    assert groups[0] == groups[1] and groups[2] == groups[3] and groups[4] == groups[5]
    assert len(set(groups)) == 4


def test_split_photos_gives_whole_groups_to_one_split_the_same_every_time(tmp_path):
    photos = [_photo(tmp_path, f"p{i}_jpg.rf.{k}.jpg", i * 10 + k) for i in range(20) for k in range(2)]
    first = scene_photos.split_photos(photos, 0.3)
    assert {p.path for p in first["train"]}.isdisjoint({p.path for p in first["val"]})
    assert len(first["train"]) + len(first["val"]) == len(photos) and first["val"] and first["train"]
    val_families = {p.path.name.split(".rf.")[0] for p in first["val"]}
    assert not val_families & {p.path.name.split(".rf.")[0] for p in first["train"]}
    assert scene_photos.split_photos(photos, 0.3) == first


def test_split_photos_keeps_the_recognizers_test_plates_out_of_train(tmp_path):
    texts = [f"A{n:03d}AA77" for n in range(200)]
    tested = next(text for text in texts if split_of(text) == "test")
    photos = [_photo(tmp_path, f"p{i}.jpg", i, text=text) for i, text in enumerate(texts)]
    splits = scene_photos.split_photos(photos, 0.0)
    assert [p.plates[0].text for p in splits["val"]] == [t for t in texts if split_of(t) == "test"]
    assert tested not in {p.plates[0].text for p in splits["train"]}


# Drawing into photos


@needs_font
def test_paste_lights_the_plate_as_the_look_says_and_returns_its_box():
    image = np.full((300, 400, 3), 128, np.uint8)
    plate = synthetic.render_plate("A123BC77", "private", np.random.default_rng(0))
    corners = np.array([[100, 100], [300, 100], [300, 143], [100, 143]], np.float64)
    look = scenes.Look(dark=40.0, light=180.0, cast=(1.0, 1.0, 1.0), blur=0.0, noise=0.0)
    box = scenes.paste(image, plate, corners, look, np.random.default_rng(1))
    assert box == pytest.approx((100, 100, 300, 143))
    grey = cv2.cvtColor(image[104:140, 104:296], cv2.COLOR_BGR2GRAY)
    dark, light = np.percentile(grey, (5, 95))
    assert abs(dark - 40) < 12 and abs(light - 180) < 8
    assert (image[:90] == 128).all() and (image[155:] == 128).all()  # nothing drawn outside


@needs_font
def test_matched_blur_finds_the_blur_of_a_blurred_plate():
    plate = cv2.cvtColor(synthetic.render_plate("A123BC77", "private", np.random.default_rng(0)), cv2.COLOR_BGR2GRAY)
    small = cv2.resize(plate, (200, 43), interpolation=cv2.INTER_AREA)
    for sigma in (0.0, 1.2, 2.4):
        blurred = cv2.GaussianBlur(small, (0, 0), sigma) if sigma else small
        assert scenes.matched_blur(small, blurred) == sigma


def test_erase_paints_a_plate_over_with_its_surroundings():
    image = np.full((200, 300, 3), 90, np.uint8)
    image[80:110, 100:200] = 240
    scenes.erase(image, (100, 80, 200, 110))
    assert np.abs(image[80:110, 100:200].astype(int) - 90).max() < 20


@needs_font
def test_pasted_scene_covers_real_plates_adds_others_and_labels_each_with_its_class(tmp_path):
    photo = _photo(tmp_path, "street.jpg", 0, boxes=((250, 250, 370, 280), (40, 40, 130, 62)))
    original = cv2.imread(str(photo.path))
    scene = scenes.pasted_scene(photo, np.random.default_rng(3), replace_share=1.0, two_line_share=0.5, extra_plates=3)
    assert scene.kind == "pasted" and scene.image.shape == original.shape
    assert all(p.style is not None for p in scene.plates)  # every real plate covered by a rendered one
    assert len(scene.plates) >= 2
    for plate in scene.plates:
        assert plate.cls == (1 if plate.style in synthetic.TWO_LINE_STYLES else 0)
        assert synthetic.lines(plate.style) == plate.lines and plate.text
        x1, y1, x2, y2 = plate.box
        assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 400
    extra = scene.plates[2:]
    for number, plate in enumerate(extra):  # drawn where no plate is
        assert all(iou(plate.box, other.box) == 0 for other in scene.plates[:2] + extra[:number])
    # The real plates' places changed; far from every plate, the photo did not.
    assert np.abs(scene.image[250:280, 250:370].astype(int) - original[250:280, 250:370]).mean() > 10
    again = scenes.pasted_scene(photo, np.random.default_rng(3), replace_share=1.0, two_line_share=0.5, extra_plates=3)
    assert np.array_equal(again.image, scene.image) and again.plates == scene.plates


@needs_font
def test_a_rendered_plate_the_frame_cuts_is_boxed_as_far_as_it_shows_with_no_text(tmp_path):
    # A two-line plate over a one-line plate's place at the top of the photo is taller than the place it covers.
    photo = _photo(tmp_path, "edge.jpg", 0, boxes=((250, 0, 370, 26), (250, 250, 370, 280)))
    scene = scenes.pasted_scene(photo, np.random.default_rng(0), replace_share=1.0, two_line_share=1.0, extra_plates=0)
    cut, whole = scene.plates
    assert cut.lines == whole.lines == 2 and cut.style is not None
    assert cut.text is None and cut.box[1] == 0 and cut.box[3] > 26
    assert whole.text is not None and synthetic.lines(whole.style) == 2


@needs_font
def test_pasted_scene_keeps_the_real_plates_it_does_not_cover(tmp_path):
    photo = _photo(tmp_path, "street.jpg", 0, lines=2, text="A001AA77")
    scene = scenes.pasted_scene(photo, np.random.default_rng(0), replace_share=0.0, extra_plates=0)
    assert scene.plates == list(photo.plates) and scene.plates[0].cls == scene_photos.TWO_LINE
    assert np.array_equal(scene.image, cv2.imread(str(photo.path)))


@needs_font
def test_plates_drawn_elsewhere_range_from_small_to_half_the_frame(tmp_path):
    photo = _photo(tmp_path, "empty.jpg", 0, boxes=())
    widths = []
    for seed in range(60):
        scene = scenes.pasted_scene(photo, np.random.default_rng(seed), extra_plates=3)
        widths += [p.box[2] - p.box[0] for p in scene.plates]
    assert min(widths) < 30 and max(widths) > 200 and max(widths) <= 0.5 * 640 * 1.2


def test_closeup_cuts_a_window_the_plate_fills_30_to_60_percent_of_with_the_photos_own_pixels(tmp_path):
    photo = _photo(tmp_path, "near.png", 0, boxes=((250, 250, 370, 280), (560, 20, 600, 35)))
    original = cv2.imread(str(photo.path))
    for seed in range(20):
        scene = scenes.closeup(photo, np.random.default_rng(seed))
        height, width = scene.image.shape[:2]
        main = next(p for p in scene.plates if p.box[2] - p.box[0] >= 100)
        assert 0.3 <= (main.box[2] - main.box[0]) / width <= 0.6 + 1e-6
        assert main.box[0] >= 0 and main.box[2] <= width and main.box[1] >= 0 and main.box[3] <= height
        # Nothing synthetic: the window is the photo's pixels where the plate is.
        x1, y1, x2, y2 = (round(v) for v in main.box)
        assert np.array_equal(scene.image[y1:y2, x1:x2], original[250:280, 250:370])
    assert scenes.closeup(photo, np.random.default_rng(0), min_width=200) is None


def test_background_is_a_window_beside_a_plate_that_shows_no_plate(tmp_path):
    boxes = ((250, 250, 370, 280), (420, 200, 480, 215))
    photo = _photo(tmp_path, "street.png", 0, boxes=boxes)
    original = cv2.imread(str(photo.path))
    found = 0
    for seed in range(30):
        scene = scenes.background(photo, np.random.default_rng(seed))
        if scene is None:
            continue
        found += 1
        assert scene.plates == [] and scene.kind == "background"
        assert min(scene.image.shape[:2]) >= scenes.BACKGROUND_MIN_SIDE
        # The photo's own pixels, at a place no plate's box reaches.
        match = cv2.matchTemplate(original, scene.image, cv2.TM_SQDIFF)
        top, left = np.unravel_index(int(match.argmin()), match.shape)
        height, width = scene.image.shape[:2]
        assert np.array_equal(original[top : top + height, left : left + width], scene.image)
        assert not any(x1 < left + width and left < x2 and y1 < top + height and top < y2 for x1, y1, x2, y2 in boxes)
    assert found >= 20
    assert scenes.background(_photo(tmp_path, "bare.png", 1, boxes=()), np.random.default_rng(0)) is None


def test_yolo_rows_normalise_boxes_to_the_image_and_give_each_its_class():
    plates = [scene_photos.ScenePlate((10, 20, 110, 40)), scene_photos.ScenePlate((200, 100, 260, 140), lines=2)]
    assert scene_photos.yolo_rows(plates, 400, 200) == (
        "0 0.150000 0.150000 0.250000 0.100000\n1 0.575000 0.600000 0.150000 0.200000\n"
    )


# The set on disk


@needs_font
def test_write_scene_set_writes_a_yolo_set_and_manifests_val_from_val_photos_only(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    splits = {
        "train": [_photo(photos, f"t{i}.jpg", i) for i in range(3)],
        "val": [_photo(photos, "v0.jpg", 10, lines=2, text="A001AA77")],
    }
    out = tmp_path / "set"
    counts = scene_set.counts_of(scene_set.Counts(pasted=10, closeups=5, backgrounds=5), val_share=0.2)
    assert counts["val"] == scene_set.Counts(2, 1, 1) and counts["train"] == scene_set.Counts(8, 4, 4)
    records = scene_set.write_scene_set(splits, out, counts, seed=0, log=lambda line: None)
    assert sorted(r["kind"] for r in records).count("photo") == 4
    backgrounds = [r for r in records if r["kind"] == "background"]
    assert len(backgrounds) == 5 and all(r["plates"] == [] for r in backgrounds)
    for record in records:
        image = out / record["image"]
        assert image.is_file()
        rows = (out / "labels" / image.parent.name / f"{image.stem}.txt").read_text().splitlines()
        assert len(rows) == len(record["plates"])
        if record["image"].startswith("images/val/"):
            assert Path(record["source"]) == splits["val"][0].path
    spec = yaml.safe_load((out / "data.yaml").read_text())
    assert spec["names"] == {0: "plate", 1: "two-line plate"} and spec["val"] == "images/val"
    assert len(load_yolo(out / "data.yaml", split="val")) == 5  # 2 pasted, a close-up, a background, the photo
    val = load_json_manifest(out / "val.json")
    assert len(val) == 5
    two_line = load_json_manifest(out / "val_two_line.json")
    assert two_line and all(plate.text for photo in two_line for plate in photo.plates)
    assert (out / "val_photos.txt").read_text() == f"{splits['val'][0].path}\n"
    rendered = scene_set.rendered_plates(out, "train")
    assert rendered and all(
        plate.lines == 2 and plate.text and "/images/train/pasted_" in plate.image for plate in rendered
    )
    assert all("/images/val/" in plate.image for plate in scene_set.rendered_plates(out, "val"))
    first = {p.name: p.read_bytes() for p in sorted((out / "images" / "train").glob("pasted_*"))}
    scene_set.write_scene_set(splits, tmp_path / "again", counts, seed=0, log=lambda line: None)
    again = {p.name: p.read_bytes() for p in sorted((tmp_path / "again" / "images" / "train").glob("pasted_*"))}
    assert first == again


@needs_font
def test_write_scene_set_replaces_a_set_it_wrote_and_refuses_other_folders(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    splits = {"train": [_photo(photos, "t.jpg", 1)], "val": [_photo(photos, "v.jpg", 2)]}
    out = tmp_path / "set"
    scene_set.write_scene_set(
        splits, out, scene_set.counts_of(scene_set.Counts(6, 0), 0.5), seed=0, log=lambda line: None
    )
    scene_set.write_scene_set(
        splits, out, scene_set.counts_of(scene_set.Counts(2, 0), 0.5), seed=0, originals=False, log=lambda line: None
    )
    assert sorted(p.name for p in (out / "images" / "train").iterdir()) == ["pasted_000000.jpg"]
    assert sorted(p.name for p in (out / "labels" / "val").iterdir()) == ["pasted_000000.txt"]
    other = tmp_path / "other"
    (other / "images").mkdir(parents=True)
    with pytest.raises(ValueError, match="no scenes.json"):
        scene_set.write_scene_set(
            splits, other, scene_set.counts_of(scene_set.Counts(2, 0), 0.5), seed=0, log=lambda line: None
        )
