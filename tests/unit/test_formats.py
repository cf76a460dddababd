import itertools

import pytest

from plates.recognition.formats import ONE_LINE, TWO_LINE, is_valid_plate, plate_format


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


def test_the_one_line_grammars_prefixes_are_exactly_the_starts_of_plates_and_its_plates_the_valid_ones():
    # Every string over T (a letter, and the diplomatic T), 1 and 7 (which start 3-digit regions), up to the
    # longest plate: the prefixes are exactly the starts of the valid plates among them.
    strings = ["".join(chars) for n in range(11) for chars in itertools.product("T17", repeat=n)]
    starts = {plate[:n] for plate in strings if is_valid_plate(plate) for n in range(len(plate) + 1)}
    assert [s for s in strings if ONE_LINE.is_prefix(s)] == [s for s in strings if s in starts]
    assert [s for s in strings if ONE_LINE.allows(s)] == [s for s in strings if is_valid_plate(s)]


@pytest.mark.parametrize("text", ["H701HE27", "P825HE55", "C161YP190", "8343AT50", "0142KP42", "5719KB42"])
def test_the_two_line_grammar_allows_the_two_line_layouts(text):
    assert TWO_LINE.allows(text) and all(TWO_LINE.is_prefix(text[:n]) for n in range(len(text) + 1))


@pytest.mark.parametrize(
    "text",
    [
        "AB12377",  # a taxi's: one line only
        "AB123477",  # a trailer's one-line plate
        "A123477",  # a police car's
        "123T456777",  # diplomatic
        "H70HE27",  # a digit short
        "H701HE00",  # no region 00
    ],
)
def test_the_two_line_grammar_refuses_what_is_never_made_on_two_lines(text):
    assert not TWO_LINE.allows(text)


def test_the_two_line_grammar_stops_a_reading_at_its_first_impossible_character():
    assert TWO_LINE.is_prefix("8343") and TWO_LINE.is_prefix("B343")
    assert not TWO_LINE.is_prefix("AB") and not TWO_LINE.is_prefix("A1234") and not TWO_LINE.is_prefix("8343A1")
