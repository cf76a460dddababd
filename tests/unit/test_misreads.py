"""Where reading fails: misreads split into main field and region code, and the characters confused."""

from __future__ import annotations

from dataclasses import dataclass, field

from plates.evaluation.manifests import LabelledPhoto, LabelledPlate
from plates.evaluation.misreads import Misreads, nearest, split
from plates.evaluation.report import format_report, report_to_dict
from plates.evaluation.scoring import evaluate


def test_split_takes_the_region_code_the_formats_find():
    assert split("B840CK197") == ("B840CK", "197")
    assert split("AB12377") == ("AB123", "77")
    assert split("") is None and split("HELLO") is None


def test_outcomes_say_which_part_was_wrong():
    misreads = Misreads()
    misreads.add("E677MC43", "E677MC63")  # region only
    misreads.add("H033HB26", "B033HB26")  # main field only
    misreads.add("O123AB77", "B123AB772")  # both
    misreads.add("A001AA77", "")  # read as no plate
    misreads.add("T046YC98", "T046YC98")
    assert dict(misreads.outcomes) == {"region only": 1, "main field only": 1, "both": 1, "unread": 1, "right": 1}
    assert misreads.confusions["region"] == {"4>6": 1, "_>2": 1}
    assert misreads.confusions["main"] == {"H>B": 1, "O>B": 1}
    assert misreads.compared == 5
    lines = misreads.format()
    assert lines[0].startswith("where reading fails (5 texts compared): right 1, region only 1, main field only 1")
    assert "4>6 1" in lines[2] and "H>B 1" in lines[1]


def test_nearest_picks_the_returned_text_with_fewest_edits():
    assert nearest("E677MC43", ["X193XX99", "E677MC63"]) == "E677MC63"
    assert nearest("E677MC43", []) is None


@dataclass
class Plate:
    text: str | None
    box: tuple
    score: float = 0.9
    text_score: float = 0.9
    candidates: list = field(default_factory=list)


def test_the_report_counts_matched_plates_and_photo_level_texts(tmp_path):
    box = (10.0, 10.0, 60.0, 25.0)
    photos = [
        LabelledPhoto(tmp_path / "a.jpg", [LabelledPlate(box, "T046YC98")]),
        # A photo-level text: compared with the nearest text the photo returned.
        LabelledPhoto(tmp_path / "b.jpg", [LabelledPlate(box), LabelledPlate((100, 10, 150, 25))], text="E677MC43"),
        # Nothing returned: not a reading to compare (a plate not found is detection's part).
        LabelledPhoto(tmp_path / "c.jpg", [LabelledPlate(box)], text="B126OB96"),
    ]
    predictions = [[Plate("T046YC88", box)], [Plate("X193XX99", box), Plate("E677MC63", (100, 10, 150, 25))], []]
    report = evaluate(photos, predictions)
    assert report.misreads.compared == 2
    assert report.misreads.confusions["region"] == {"9>8": 1, "4>6": 1}
    assert "where reading fails (2 texts compared): right 0, region only 2" in format_report(report)
    assert report_to_dict(report)["where_reading_fails"]["outcomes"]["region only"] == 2
