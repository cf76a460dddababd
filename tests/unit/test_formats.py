import pytest

from plates.recognition.formats import is_valid_plate, plate_format


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
