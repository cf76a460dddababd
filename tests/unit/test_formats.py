import itertools

import pytest

from plates.recognition.formats import is_plate_prefix, is_valid_plate, plate_format


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B840CK197", "private"),
        ("A123BC77", "private"),
        ("AB12377", "taxi"),
        ("AB1234 77".replace(" ", ""), "trailer"),
        ("A123477", "police"),
        ("1234AB50", "military"),
        ("123T456777", "diplomatic"),
    ],
)
def test_plate_format_names_each_official_format(text, expected):
    assert plate_format(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "B840CK", "B840CK1977", "Б840СК197", "D840CK197", "B840CK00", "B840CK297", "840CK197", "BB40CK197"],
)
def test_is_valid_plate_rejects_non_plates(text):
    assert not is_valid_plate(text)


def test_is_plate_prefix_holds_for_exactly_the_starts_of_plates():
    # Every string over T (a letter, and the diplomatic T), 1 and 7 (which start 3-digit regions), up to the
    # longest plate: the prefixes are exactly the starts of the valid plates among them.
    strings = ["".join(chars) for n in range(11) for chars in itertools.product("T17", repeat=n)]
    starts = {plate[:n] for plate in strings if is_valid_plate(plate) for n in range(len(plate) + 1)}
    assert [s for s in strings if is_plate_prefix(s)] == [s for s in strings if s in starts]
