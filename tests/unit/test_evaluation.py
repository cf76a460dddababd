import argparse
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from plates.cli import evaluate as cli
from plates.client.service import Plate
from plates.evaluation.manifests import LabelledPhoto, LabelledPlate, load_manifest
from plates.evaluation.report import format_report, format_summary, report_to_json
from plates.evaluation.scoring import evaluate, iou, match, sweep, with_min_text_score
from plates.exceptions import InvalidInputError, PlatesError, ServerUnavailableError


def write_image(path: Path, width: int = 1, height: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.zeros((height, width, 3), np.uint8))
    return path


def write_manifest(tmp_path: Path, entries, name: str = "manifest.json") -> Path:
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("image"), str):
            write_image(tmp_path / entry["image"])
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return path


def photo(*plates: LabelledPlate, text: str | None = None, name: str = "p.jpg") -> LabelledPhoto:
    return LabelledPhoto(Path(name), list(plates), text, name=name)


# ---------------------------------------------------------------------------------------------- iou, match


def test_iou_of_identical_disjoint_and_half_overlapping_boxes():
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 0, 10], [0, 0, 0, 10]) == 0.0  # no area


def test_match_takes_the_highest_iou_first_and_each_box_once():
    labels = [[0, 0, 10, 10], [2, 0, 12, 10]]
    predictions = [[1, 0, 11, 10], [2, 0, 12, 10]]
    # label 1 = prediction 1 exactly (IoU 1) wins first; label 0 then takes prediction 0 (IoU 9/11).
    assert [(i, j) for i, j, _ in match(labels, predictions)] == [(1, 1), (0, 0)]
    # one prediction equally over two labels matches only one of them: on a tie, the lower label index
    assert [(i, j) for i, j, _ in match(labels, [[1, 0, 11, 10]])] == [(0, 0)]


def test_match_ignores_pairs_below_the_threshold():
    assert match([[0, 0, 10, 10]], [[5, 0, 15, 10]]) == []  # IoU 1/3
    assert match([[0, 0, 10, 10]], [[0, 0, 10, 5]]) == [(0, 0, 0.5)]  # exactly 0.5 matches
    assert len(match([[0, 0, 10, 10]], [[5, 0, 15, 10]], threshold=0.3)) == 1


# ---------------------------------------------------------------------------------------------- metrics


def test_metrics_count_hits_and_totals():
    photos = [
        photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), LabelledPlate((200, 0, 300, 20), "B456CE99"), name="a.jpg"),
        photo(LabelledPlate((0, 0, 100, 20)), name="b.jpg"),
    ]
    predictions = [
        [Plate("A123BC77", [1, 0, 100, 20], 0.9), Plate("B456CE90", [200, 1, 300, 20], 0.8)],
        [Plate(None, [500, 500, 600, 520], 0.3)],  # misses the label, a false positive
    ]
    report = evaluate(photos, predictions)
    assert (report.detection_recall.hits, report.detection_recall.total) == (2, 3)
    assert (report.detection_precision.hits, report.detection_precision.total) == (2, 3)
    assert (report.recognition.hits, report.recognition.total) == (1, 2)
    assert (report.end_to_end.hits, report.end_to_end.total) == (1, 2)
    assert report.photos == 2
    a, b = report.errors
    assert a.image == "a.jpg" and a.misread == [
        {
            "box": [200.0, 0.0, 300.0, 20.0],
            "predicted_box": [200.0, 1.0, 300.0, 20.0],
            "expected": "B456CE99",
            "got": "B456CE90",
        }
    ]
    assert a.texts_not_found == [{"expected": "B456CE99", "returned": ["A123BC77", "B456CE90"]}]
    assert b.missed == [{"box": [0.0, 0.0, 100.0, 20.0], "text": None}]
    assert b.false_positives == [{"box": [500.0, 500.0, 600.0, 520.0], "text": None, "score": 0.3}]


def test_recognition_counts_only_detected_plates_with_a_text():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), LabelledPlate((200, 0, 300, 20), "B456CE99"))]
    report = evaluate(photos, [[Plate(None, [0, 0, 100, 20], 0.9)]])  # unread; the second plate missed
    assert (report.recognition.hits, report.recognition.total) == (0, 1)
    assert report.errors[0].misread[0]["got"] is None
    assert "got (unread)" in format_report(report)


def test_end_to_end_finds_a_text_read_anywhere_in_the_photo_once_per_label():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), LabelledPlate((200, 0, 300, 20), "A123BC77"))]
    # the box is wrong (no detection match) but the text is among the photo's texts: end-to-end counts it once
    report = evaluate(photos, [[Plate("A123BC77", [600, 0, 700, 20], 0.9)]])
    assert (report.end_to_end.hits, report.end_to_end.total) == (1, 2)
    assert report.detection_recall.hits == 0 and report.recognition.total == 0


def test_small_plate_recall_counts_labels_narrower_than_40_px():
    photos = [
        photo(
            LabelledPlate((0, 0, 39.5, 10)),  # small, found
            LabelledPlate((100, 0, 130, 10)),  # small, missed
            LabelledPlate((200, 0, 240, 10)),  # 40 px wide: not small
        )
    ]
    report = evaluate(photos, [[Plate(None, [0, 0, 39.5, 10], 0.9), Plate(None, [200, 0, 240, 10], 0.9)]])
    assert (report.small_recall.hits, report.small_recall.total) == (1, 2)
    assert (report.detection_recall.hits, report.detection_recall.total) == (2, 3)


def test_photo_level_text_counts_for_end_to_end_only():
    photos = [photo(LabelledPlate((0, 0, 100, 20)), LabelledPlate((200, 0, 300, 20)), text="H002EX71")]
    report = evaluate(photos, [[Plate("H002EX71", [0, 0, 100, 20], 0.9), Plate("X", [200, 0, 300, 20], 0.9)]])
    assert (report.end_to_end.hits, report.end_to_end.total) == (1, 1)
    assert report.recognition.total == 0


def test_evaluate_rejects_predictions_that_do_not_line_up_with_photos():
    with pytest.raises(ValueError, match="1 photos but 0 prediction lists"):
        evaluate([photo()], [])


def test_texts_read_on_unmatched_boxes_are_counted_and_listed():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), name="a.jpg")]
    read, sign = Plate("A123BC77", [0, 0, 100, 20], 0.9), Plate("M100MM77", [300, 0, 400, 20], 0.4)
    unread = Plate(None, [0, 50, 9, 60], 0.3)
    report = evaluate(photos, [[read, sign, unread]])
    assert report.unmatched_texts == ["M100MM77"]
    assert "texts on unmatched boxes  1  M100MM77" in format_report(report)


def test_a_right_reading_blanked_by_min_text_score_is_counted_as_its_cost():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), LabelledPlate((200, 0, 300, 20), "B456CE99"))]
    blanked = Plate(None, [0, 0, 100, 20], 0.9, 0.0, [("A123BC77", 0.01)])
    unread = Plate(None, [200, 0, 300, 20], 0.9, 0.0, [("B456CE90", 0.01)])  # a wrong text, blanked: no cost
    report = evaluate(photos, [[blanked, unread]])
    assert report.blanked_right == 1 and report.end_to_end.hits == 0
    assert "right readings blanked    1" in format_report(report)


def test_with_min_text_score_re_decides_texts_from_the_top_candidate():
    plates = [
        Plate(None, [0, 0, 1, 1], 0.9, 0.0, [("A123BC77", 0.02), ("A123BC777", 0.01)]),
        Plate("B456CE99", [0, 0, 1, 1], 0.9, 0.5, [("B456CE99", 0.5)]),
        Plate(None, [0, 0, 1, 1], 0.9),  # no valid text at all
    ]
    assert [p.text for p in with_min_text_score(plates, 0.01)] == ["A123BC77", "B456CE99", None]
    assert [p.text for p in with_min_text_score(plates, 0.03)] == [None, "B456CE99", None]
    assert [p.text_score for p in with_min_text_score(plates, 0.03)] == [0.0, 0.5, 0.0]


def test_sweep_scores_each_threshold_from_the_same_predictions():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), name="a.jpg")]
    plate = Plate("A123BC77", [0, 0, 100, 20], 0.9, 0.2, [("A123BC77", 0.2)])
    sign = Plate("M100MM77", [300, 0, 400, 20], 0.4, 0.01, [("M100MM77", 0.01)])
    (low, at_low), (high, at_high) = sweep(photos, [[plate, sign]], [0.0, 0.5])
    assert (low, at_low.recognition.hits, at_low.unmatched_texts, at_low.blanked_right) == (0.0, 1, ["M100MM77"], 0)
    assert (high, at_high.recognition.hits, at_high.unmatched_texts, at_high.blanked_right) == (0.5, 0, [], 1)


# ---------------------------------------------------------------------------------------------- output


def test_summary_is_the_last_line_of_the_plain_report():
    photos = [photo(LabelledPlate((0, 0, 30, 10), "A123BC77"), name="a.jpg")]
    report = evaluate(photos, [[Plate("A123BC77", [0, 0, 30, 10], 0.9)]])
    summary = format_summary(report)
    assert summary == (
        "detection R 1.000 P 1.000 (n=1) | small<40px R 1.000 (n=1) | recognition 1.000 (n=1) | "
        "end-to-end 1.000 (n=1) | 1 photos"
    )
    assert format_report(report).splitlines()[-1] == summary


def test_summary_says_n_a_where_nothing_was_counted():
    report = evaluate([photo()], [[]])
    assert "detection R n/a P n/a (n=0)" in format_summary(report)
    assert "recognition n/a (n=0)" in format_summary(report)


def test_plain_report_lists_each_error_and_does_not_repeat_a_misread_as_not_found():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), text="Z999ZZ99", name="bad.jpg")]
    report = evaluate(photos, [[Plate("A123BC78", [0, 0, 100, 20], 0.9), Plate(None, [300, 0, 400, 20], 0.4)]])
    text = format_report(report)
    assert "errors in 1 of 1 photos" in text and "bad.jpg" in text
    assert "misread         box=(0, 0, 100, 20) expected A123BC77 got A123BC78" in text
    assert "false positive  box=(300, 0, 400, 20) text=(unread) score=0.40" in text
    assert "not found       Z999ZZ99 (returned: A123BC78)" in text
    assert "not found       A123BC77" not in text


def test_json_report_has_metrics_with_numerators_denominators_and_errors():
    photos = [photo(LabelledPlate((0, 0, 100, 20), "A123BC77"), name="a.jpg")]
    document = json.loads(report_to_json(evaluate(photos, [[Plate("A123BC70", [0, 0, 100, 20], 0.9)]])))
    assert document["metrics"]["recognition_accuracy"] == {"value": 0.0, "hits": 0, "total": 1}
    assert document["metrics"]["detection_recall"] == {"value": 1.0, "hits": 1, "total": 1}
    assert document["metrics"]["small_recall"] == {"value": None, "hits": 0, "total": 0}
    assert document["errors"][0]["image"] == "a.jpg"
    assert document["errors"][0]["misread"][0]["expected"] == "A123BC77"
    assert document["photos"] == 1 and document["summary"].endswith("| 1 photos")


# ---------------------------------------------------------------------------------------------- manifests


def test_json_manifest_with_per_plate_texts(tmp_path):
    path = write_manifest(
        tmp_path,
        [
            {"image": "a.jpg", "plates": [{"box": [1, 2, 30, 12], "text": "A123BC77"}, {"box": [40, 2, 90, 12]}]},
            {"image": "sub/b.png", "plates": []},
        ],
    )
    photos = load_manifest(path)
    assert [p.name for p in photos] == ["a.jpg", "sub/b.png"]
    assert photos[0].image == tmp_path / "a.jpg"
    assert photos[0].plates == [LabelledPlate((1, 2, 30, 12), "A123BC77"), LabelledPlate((40, 2, 90, 12), None)]
    assert photos[0].texts == ["A123BC77"] and photos[0].text is None
    assert photos[1].plates == []


def test_e2e_form_gives_a_single_box_its_photo_text(tmp_path):
    path = write_manifest(tmp_path, [{"image": "a.jpg", "plates": [{"box": [1, 2, 30, 12]}], "text": "E677MC43"}])
    (only,) = load_manifest(path)
    assert only.plates == [LabelledPlate((1, 2, 30, 12), "E677MC43")]
    assert only.text is None and only.texts == ["E677MC43"]


def test_e2e_form_keeps_the_text_of_a_photo_with_several_boxes_at_photo_level(tmp_path):
    entry = {"image": "a.jpg", "plates": [{"box": [1, 2, 30, 12]}, {"box": [40, 2, 90, 12]}], "text": "O459OO97"}
    (only,) = load_manifest(write_manifest(tmp_path, [entry]))
    assert [p.text for p in only.plates] == [None, None]
    assert only.text == "O459OO97" and only.texts == ["O459OO97"]


def test_photo_text_equal_to_a_plate_text_is_counted_once(tmp_path):
    plates = [{"box": [1, 2, 30, 12], "text": "A1"}, {"box": [40, 2, 90, 12]}]
    entry = {"image": "a.jpg", "plates": plates, "text": "A1"}
    (only,) = load_manifest(write_manifest(tmp_path, [entry]))
    assert only.texts == ["A1"]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"image": "a.jpg"}, "must be a JSON list of photos, got an object"),
        ([["a.jpg"]], "manifest entry 0: must be an object, got a list"),
        ([{"plates": []}], 'manifest entry 0: field "image" must be a non-empty path, got null'),
        ([{"image": "a.jpg"}], r'manifest entry 0 \(a.jpg\): field "plates" is missing'),
        ([{"image": "a.jpg", "plates": {}}], r'manifest entry 0 \(a.jpg\): field "plates" must be a list'),
        ([{"image": "a.jpg", "plates": [{"text": "A"}]}], r'entry 0 \(a.jpg\), plate 0: field "box" is missing'),
        (
            [
                {"image": "a.jpg", "plates": []},
                {"image": "b.jpg", "plates": [{"box": [1, 2, 3, 4]}, {"box": [1, "2", 3, 4]}]},
            ],
            r'manifest entry 1 \(b.jpg\), plate 1: field "box" must be 4 numbers, got \[1, "2", 3, 4\]',
        ),
        ([{"image": "a.jpg", "plates": [{"box": [5, 2, 3, 4]}]}], r'"box" must be \[x1, y1, x2, y2\] with x2 > x1'),
        ([{"image": "a.jpg", "plates": [{"box": [1, 2, 3, 4], "text": 77}]}], '"text" must be a non-empty string'),
        ([{"image": "a.jpg", "plates": [{"box": [1, 2, 3, 4], "txt": "A"}]}], r'unknown field "txt" \(known: box'),
        (
            [{"image": "a.jpg", "plates": [{"box": [1, 2, 3, 4], "text": "A1"}], "text": "B2"}],
            r"field \"text\" \('B2'\) contradicts the text of its only plate \('A1'\)",
        ),
        (
            [{"image": "a.jpg", "plates": []}, {"image": "./a.jpg", "plates": []}],
            r"manifest entry 1 \(./a.jpg\): image already listed as entry 0",
        ),
    ],
)
def test_manifest_error_names_entry_and_field(tmp_path, entries, message):
    with pytest.raises(InvalidInputError, match=message):
        load_manifest(write_manifest(tmp_path, entries))


def test_manifest_error_names_a_missing_image(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps([{"image": "gone.jpg", "plates": []}]))
    with pytest.raises(InvalidInputError, match=r'manifest entry 0 \(gone.jpg\): field "image": no such file'):
        load_manifest(path)


def test_manifest_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text('[\n{"image": "a.jpg",,}\n]')
    with pytest.raises(InvalidInputError, match=r"manifest .*manifest.json: not JSON: .* at line 2"):
        load_manifest(path)


def test_missing_manifest_is_named(tmp_path):
    with pytest.raises(InvalidInputError, match="absent.json: no such file or folder"):
        load_manifest(tmp_path / "absent.json")


# ---------------------------------------------------------------------------------------------- YOLO


def make_yolo(tmp_path: Path) -> Path:
    root = tmp_path / "detect"
    write_image(root / "images" / "val" / "a.jpg", width=200, height=100)
    write_image(root / "images" / "val" / "b.png")  # 1 pixel, no label file: no plate
    write_image(root / "images" / "val" / "c.png")  # empty label file: no plate
    write_image(root / "images" / "train" / "t.png")
    (root / "labels" / "val").mkdir(parents=True)
    (root / "labels" / "val" / "a.txt").write_text("0 0.5 0.5 0.1 0.2\n0 0.25 0.5 0.5 0.4\n")
    (root / "labels" / "val" / "c.txt").write_text("")
    (root / "data.yaml").write_text("path: .\ntrain: images/train\nval: images/val\nnames:\n  0: plate\n")
    return root


def test_yolo_data_yaml_denormalises_boxes_by_the_image_size(tmp_path):
    root = make_yolo(tmp_path)
    photos = load_manifest(root / "data.yaml")
    assert [p.name for p in photos] == ["images/val/a.jpg", "images/val/b.png", "images/val/c.png"]
    assert photos[0].plates == [LabelledPlate((90, 40, 110, 60)), LabelledPlate((0, 30, 100, 70))]
    assert photos[1].plates == [] and photos[2].plates == []
    assert photos[0].texts == []


def test_yolo_folder_and_split_option(tmp_path):
    root = make_yolo(tmp_path)
    assert [p.name for p in load_manifest(root)] == ["images/val/a.jpg", "images/val/b.png", "images/val/c.png"]
    assert [p.name for p in load_manifest(root, split="train")] == ["images/train/t.png"]
    (root / "data.yaml").unlink()  # without data.yaml: images/<split> and labels/<split>
    assert len(load_manifest(root)) == 3


def test_yolo_unknown_split_is_named(tmp_path):
    root = make_yolo(tmp_path)
    with pytest.raises(InvalidInputError, match=r'no split "test" \(it has: train, val\)'):
        load_manifest(root / "data.yaml", split="test")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("0 0.5 0.5 0.1", r'a row must be 5 numbers "class cx cy w h", got \'0 0.5 0.5 0.1\''),
        ("0 0.5 0.5 x 0.1", "a row must be 5 numbers"),
        ("0.5 0.5 0.5 0.1 0.1", "class must be a non-negative integer"),
        ("0 0.5 0.5 1.5 0.1", "box 0.5 0.5 1.5 0.1 must be normalised to 0..1"),
    ],
)
def test_yolo_label_error_names_the_file_line_and_image(tmp_path, row, message):
    root = make_yolo(tmp_path)
    (root / "labels" / "val" / "a.txt").write_text(f"0 0.5 0.5 0.1 0.1\n{row}\n")
    with pytest.raises(InvalidInputError, match=rf"labels/val/a.txt line 2 \(image images/val/a.jpg\): {message}"):
        load_manifest(root)


def test_yolo_unreadable_image_is_named(tmp_path):
    root = make_yolo(tmp_path)
    (root / "images" / "val" / "a.jpg").write_text("not a jpeg")
    with pytest.raises(InvalidInputError, match=r"YOLO image images/val/a.jpg: .*not a JPEG or PNG image"):
        load_manifest(root)


# ---------------------------------------------------------------------------------------------- shared data


def test_the_shared_e2e_manifest_and_yolo_val_split_parse(samples):
    data = samples.parent
    e2e = load_manifest(data / "e2e.json")
    assert len(e2e) == 75
    assert sum(len(p.texts) for p in e2e) == 75
    assert sum(p.text is not None for p in e2e) == 2  # the two photos with two boxes
    assert sum(len(p.plates) for p in e2e) == 77
    val = load_manifest(data / "detect" / "data.yaml", split="val")
    assert len(val) == 93
    assert all(0 <= plate.box[0] < plate.box[2] for p in val for plate in p.plates)


# ---------------------------------------------------------------------------------------------- CLI


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="plates")
    cli.add_eval_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_eval_parser_defaults(monkeypatch):
    monkeypatch.delenv("PLATES_URL", raising=False)
    args = parse(["eval", "m.json"])
    assert (args.manifest, args.url, args.json, args.split) == ("m.json", "localhost:8000", False, "val")
    assert args.run is cli.run_eval
    args = parse(["eval", "d/data.yaml", "--url", "h:9000", "--json", "--split", "train"])
    assert (args.url, args.json, args.split) == ("h:9000", True, "train")


class FakeClient:
    def __init__(self, url: str) -> None:
        self.url = url

    def recognize(self, image: np.ndarray) -> list[Plate]:
        return [Plate("A123BC77", [0.0, 0.0, 1.0, 1.0], 0.9, 0.8, [("A123BC77", 0.8)])]

    def __enter__(self) -> "FakeClient":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def fake_server(monkeypatch):
    monkeypatch.setattr(cli, "require_ready", lambda url: None)
    monkeypatch.setattr(cli, "PlatesClient", FakeClient)


def test_run_eval_prints_progress_and_ends_with_the_summary(tmp_path, fake_server, capsys):
    entries = [{"image": f"{i}.png", "plates": [{"box": [0, 0, 1, 1], "text": "A123BC77"}]} for i in range(12)]
    status = cli.run_eval(parse(["eval", str(write_manifest(tmp_path, entries))]))
    out, err = capsys.readouterr()
    assert status == 0
    assert err.splitlines() == ["eval: 10/12 photos", "eval: 12/12 photos"]
    assert out.rstrip("\n").splitlines()[-1] == (
        "detection R 1.000 P 1.000 (n=12) | small<40px R 1.000 (n=12) | recognition 1.000 (n=12) | "
        "end-to-end 1.000 (n=12) | 12 photos"
    )


def test_run_eval_sweeps_min_text_score_before_the_report(tmp_path, fake_server, capsys):
    path = write_manifest(tmp_path, [{"image": "a.png", "plates": [{"box": [0, 0, 1, 1], "text": "A123BC77"}]}])
    assert cli.run_eval(parse(["eval", str(path), "--min-text-score", "0", "0.9"])) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("min_text_score  recognition")
    assert lines[1].split() == ["0", "1.000", "(1/1)", "1.000", "(1/1)", "0", "0"]
    assert lines[2].split() == ["0.9", "0.000", "(0/1)", "0.000", "(0/1)", "0", "1"]
    assert lines[-1].startswith("detection R 1.000")
    assert cli.run_eval(parse(["eval", str(path), "--json", "--min-text-score", "0.9"])) == 0
    [row] = json.loads(capsys.readouterr().out)["min_text_score_sweep"]
    assert row["min_text_score"] == 0.9 and row["blanked_right"] == 1


def test_eval_parser_refuses_a_min_text_score_outside_0_to_1(capsys):
    with pytest.raises(SystemExit):
        parse(["eval", "m.json", "--min-text-score", "1.5"])
    assert "'1.5': must be between 0 and 1" in capsys.readouterr().err


def test_run_eval_json_prints_one_document(tmp_path, fake_server, capsys):
    path = write_manifest(tmp_path, [{"image": "a.png", "plates": [{"box": [0, 0, 1, 1], "text": "B000BB00"}]}])
    assert cli.run_eval(parse(["eval", str(path), "--json"])) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["metrics"]["recognition_accuracy"] == {"value": 0.0, "hits": 0, "total": 1}
    assert document["errors"][0]["misread"][0]["got"] == "A123BC77"


def test_run_eval_names_a_photo_that_cannot_be_read(tmp_path, fake_server):
    path = write_manifest(tmp_path, [{"image": "a.png", "plates": []}])
    (tmp_path / "a.png").write_text("not a png")
    with pytest.raises(InvalidInputError, match=r"photo a.png: .*a.png is not a JPEG or PNG image"):
        cli.run_eval(parse(["eval", str(path)]))


def test_run_eval_names_the_photo_a_server_error_came_from(tmp_path, monkeypatch):
    class FailingClient(FakeClient):
        def recognize(self, image):
            raise ServerUnavailableError("no Triton server answers at http://h:1")

    monkeypatch.setattr(cli, "require_ready", lambda url: None)
    monkeypatch.setattr(cli, "PlatesClient", FailingClient)
    path = write_manifest(tmp_path, [{"image": "a.png", "plates": []}])
    with pytest.raises(ServerUnavailableError, match=r"photo a.png: no Triton server answers at http://h:1"):
        cli.run_eval(parse(["eval", str(path)]))


def test_run_eval_without_a_server_names_the_url(tmp_path):
    path = write_manifest(tmp_path, [{"image": "a.png", "plates": []}])
    with pytest.raises(ServerUnavailableError, match="no ready Triton server at http://localhost:9") as caught:
        cli.run_eval(parse(["eval", str(path), "--url", "localhost:9"]))
    assert isinstance(caught.value, PlatesError) and caught.value.exit_code == 69


def test_run_eval_checks_the_manifest_before_the_server(tmp_path):
    with pytest.raises(InvalidInputError, match="no such file"):
        cli.run_eval(parse(["eval", str(tmp_path / "absent.json"), "--url", "localhost:9"]))
