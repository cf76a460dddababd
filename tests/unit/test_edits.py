"""The fewest edits between plate texts: the costs the watchlist matches by, the pairs the misread report counts."""

from __future__ import annotations

from plates.recognition.edits import alignment, distance


def test_distance_counts_insertions_deletions_and_substitutions_at_their_costs():
    assert distance("", "") == 0 and distance("B840CK197", "") == 9
    assert distance("B840CK197", "B840OK197") == 1 and distance("B840CK197", "B840CK19") == 1
    assert distance("B840CK197", "B840OK197", lambda a, b: 0.0 if a == b else 0.25) == 0.25
    assert distance("AB", "BA") == 2  # no transpositions


def test_alignment_shows_an_added_digit_as_an_insertion_not_two_substitutions():
    assert alignment("77", "772") == [("_", "2")]
    assert alignment("777", "77") == [("7", "_")]
    assert alignment("98", "88") == [("9", "8")]
    assert alignment("B840CK", "B840CK") == []
