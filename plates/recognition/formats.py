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
_TEMPLATES = ("LDDDLL", "LLDDD", "LLDDDD", "LDDDD", "DDDDLL", "DDDTDDD")
_SEQUENCES = tuple(tuple(_CLASSES[c] for c in template + region) for template in _TEMPLATES for region in ("DD", "RDD"))
# _FITS[position][char]: the sequences that allow `char` at `position`, as a bit mask (bit i: _SEQUENCES[i]).
_FITS = tuple(
    {char: sum(1 << i for i, allowed in enumerate(column) if char in allowed) for char in ALPHABET}
    for column in itertools.zip_longest(*_SEQUENCES, fillvalue="")
)


@functools.lru_cache(maxsize=65536)
def is_plate_prefix(text: str) -> bool:
    """Whether some plate format starts with `text`."""
    if len(text) > len(_FITS):
        return False
    fits = (1 << len(_SEQUENCES)) - 1
    for position, char in enumerate(text):
        fits &= _FITS[position].get(char, 0)
    return fits != 0
