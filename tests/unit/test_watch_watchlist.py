import logging
import os

import pytest

from plates.exceptions import SettingsError
from plates.recognition.edits import normalize_plate, plate_distance
from plates.watch.watchlist import Match, WatchedPlate, Watchlist, WatchlistFile, parse_lines


def test_distance_is_zero_for_the_same_plate_and_one_per_edit():
    assert plate_distance("A505PO198", "A505PO198") == 0
    assert plate_distance("A505PO198", "A505PO199") == 1  # a substitution
    assert plate_distance("A505PO198", "A505PO19") == 1  # a deletion
    assert plate_distance("A505PO198", "XA505PO198") == 1  # an insertion


def test_look_alike_characters_are_near():
    assert plate_distance("B840CK197", "B84OCK197") == 0.5  # 0 and O
    assert plate_distance("B840CK197", "8840CK197") == 0.5  # B and 8
    assert plate_distance("B840CK197", "B840OK197") == 0.5  # C and O
    assert plate_distance("B840CK197", "B840CK197".replace("K", "M")) == 1  # K and M do not look alike


def test_plates_typed_in_cyrillic_or_with_spaces_are_the_recognizers_latin():
    assert normalize_plate("а 505 ро-198") == "A505PO198"


def test_watchlist_lines_give_plates_and_labels_and_skip_comments():
    text = "# deliveries\nA505PO198 delivery van\n\nB840CK197   # no label\n"
    assert parse_lines(text, "list.txt") == [WatchedPlate("A505PO198", "delivery van"), WatchedPlate("B840CK197", "")]


def test_a_bad_watchlist_line_is_an_error_naming_the_file_and_line():
    with pytest.raises(SettingsError, match=r"list.txt, line 2: 'A5!5' is not a plate"):
        parse_lines("A505PO198 ok\nA5!5 broken\n", "list.txt")


def test_exact_watchlist_matches_only_the_same_text():
    watchlist = Watchlist([WatchedPlate("A505PO198", "delivery")])
    assert watchlist.match(["A505PO198"]) == Match("A505PO198", "delivery", 0.0, "A505PO198")
    assert watchlist.match(["A505PO199"]) is None


def test_fuzzy_watchlist_matches_any_candidate_within_the_distance():
    watchlist = Watchlist([WatchedPlate("B840CK197", "boss")], max_distance=1)
    # The top reading is two edits away; the second candidate is a look-alike of the watched plate.
    match = watchlist.match(["B840OX193", "B84OCK197"])
    assert match == Match("B840CK197", "boss", 0.5, "B84OCK197")
    assert match.to_dict() == {"plate": "B840CK197", "label": "boss", "distance": 0.5}
    assert watchlist.match(["E123XY77"]) is None


def test_fuzzy_watchlist_takes_the_nearest_watched_plate():
    watchlist = Watchlist([WatchedPlate("B840CK199", "far"), WatchedPlate("B840CK197", "near")], max_distance=1)
    assert watchlist.match(["B84OCK197"]).label == "near"


def test_negative_max_distance_is_an_error():
    with pytest.raises(SettingsError, match="max distance"):
        Watchlist([], max_distance=-1)


def bump(path, text):
    """Write `text` and move the modification time on, as an edit a second later would."""
    path.write_text(text)
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_watchlist_file_is_read_again_when_edited(tmp_path):
    path = tmp_path / "watchlist.txt"
    path.write_text("A505PO198 delivery\n")
    watchlist = WatchlistFile(path)
    assert watchlist.match(["B840CK197"]) is None
    bump(path, "A505PO198 delivery\nB840CK197 boss\n")
    assert watchlist.match(["B840CK197"]).label == "boss"


def test_watchlist_file_broken_by_an_edit_keeps_its_last_good_list(tmp_path, caplog):
    path = tmp_path / "watchlist.txt"
    path.write_text("A505PO198 delivery\n")
    watchlist = WatchlistFile(path)
    with caplog.at_level(logging.WARNING):
        bump(path, "A505PO198 delivery\n!!! oops\n")
        assert watchlist.match(["A505PO198"]).label == "delivery"
    assert "line 2" in caplog.text and "keeping the 1 plates" in caplog.text


def test_watchlist_file_that_is_missing_at_start_is_an_error(tmp_path):
    with pytest.raises(SettingsError, match="--watchlist .*missing.txt: cannot read it"):
        WatchlistFile(tmp_path / "missing.txt")


def test_watchlist_file_deleted_then_written_again_keeps_then_takes_the_new_list(tmp_path, caplog):
    path = tmp_path / "watchlist.txt"
    path.write_text("A505PO198 delivery\n")
    watchlist = WatchlistFile(path)
    path.unlink()
    with caplog.at_level(logging.WARNING):
        assert watchlist.match(["A505PO198"]).label == "delivery"
    assert "cannot read it" in caplog.text
    path.write_text("B840CK197 boss\n")
    assert watchlist.match(["A505PO198"]) is None and watchlist.match(["B840CK197"]).label == "boss"
