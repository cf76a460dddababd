"""The formats of Russian registration plates, written with the Latin look-alikes of their letters.

`L` is a plate letter (ABEKMHOPCTYX), `D` a digit, `R` the region: two digits, or three starting with 1, 7 or 9.
"""

from __future__ import annotations

import functools
import itertools
import re

from plates.recognition.alphabet import ALPHABET, LETTERS

_L = f"[{LETTERS}]"
_REGION = "(?:0[1-9]|[1-9][0-9]|[179][0-9]{2})"

FORMATS: dict[str, str] = {
    "private": f"{_L}[0-9]{{3}}{_L}{{2}}",  # A123BC 77: cars
    "taxi": f"{_L}{{2}}[0-9]{{3}}",  # AB123 77: taxis, public transport
    "trailer": f"{_L}{{2}}[0-9]{{4}}",  # AB1234 77: trailers
    "police": f"{_L}[0-9]{{4}}",  # A1234 77: police
    "military": f"[0-9]{{4}}{_L}{{2}}",  # 1234AB 77: military
    "diplomatic": "[0-9]{3}T[0-9]{3}",  # 123T456 77: diplomatic technical staff
}
_PATTERNS = {name: re.compile(f"{body}(?P<region>{_REGION})") for name, body in FORMATS.items()}


def _match(text: str) -> tuple[str, re.Match] | tuple[None, None]:
    # The first format that matches wins: `AB123177` reads as taxi AB123 of region 177, not trailer AB1231 of 77.
    for name, pattern in _PATTERNS.items():
        match = pattern.fullmatch(text)
        if match:
            return name, match
    return None, None


def plate_format(text: str) -> str | None:
    """The name of the format `text` is written in, or None if it is not a Russian plate."""
    return _match(text)[0]


def region_code(text: str) -> str | None:
    """The region code that ends the plate `text` ("197" of B840CK197), or None if it is not a Russian plate."""
    match = _match(text)[1]
    return match["region"] if match else None


def is_valid_plate(text: str) -> bool:
    return plate_format(text) is not None


# The same formats as sequences of allowed characters, for checking a reading while it grows (beam search):
# regex has no "could this still match" test. Each format ends in a 2-digit region or a 3-digit one.
_CLASSES = {"L": LETTERS, "D": "0123456789", "T": "T", "R": "179"}


class Grammar:
    """The texts of some of the formats, as templates of character classes (`L`, `D`, `T`; each followed by the
    region), checked character by character as a reading grows."""

    def __init__(self, templates: tuple[str, ...]) -> None:
        sequences = tuple(tuple(_CLASSES[c] for c in t + region) for t in templates for region in ("DD", "RDD"))
        self._lengths = tuple(len(sequence) for sequence in sequences)
        # _fits[position][char]: the sequences that allow `char` at `position`, as a bit mask (bit i: sequence i).
        self._fits = tuple(
            {char: sum(1 << i for i, allowed in enumerate(column) if char in allowed) for char in ALPHABET}
            for column in itertools.zip_longest(*sequences, fillvalue="")
        )
        self.is_prefix = functools.lru_cache(maxsize=65536)(self._is_prefix)

    def _matching(self, text: str) -> int:
        fits = (1 << len(self._lengths)) - 1
        for position, char in enumerate(text):
            fits &= self._fits[position].get(char, 0)
        return fits

    def _is_prefix(self, text: str) -> bool:
        """Whether one of the formats starts with `text`."""
        return len(text) <= len(self._fits) and self._matching(text) != 0

    def allows(self, text: str) -> bool:
        """Whether `text` is a whole plate of one of the formats."""
        fits = self._matching(text) if len(text) <= len(self._fits) else 0
        whole = any(fits >> i & 1 and length == len(text) for i, length in enumerate(self._lengths))
        return whole and is_valid_plate(text)


ONE_LINE = Grammar(("LDDDLL", "LLDDD", "LLDDDD", "LDDDD", "DDDDLL", "DDDTDDD"))
# Two-line plates, their top row first, as GOST R 50577 lays them out: type 1A's letter and three digits over two
# letters (A123 / BC 77), and four digits over two letters on motorcycles (type 4), tractors and other machines
# (type 3) and their trailers (1234 / AB 77). No other format is made on a two-line plate, so a two-line plate is
# never read as a taxi's, a trailer's or a police car's one-line text.
TWO_LINE = Grammar(("LDDDLL", "DDDDLL"))
