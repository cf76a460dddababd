"""Finding a plate by a text read a character wrong, among millions, with an index both SQLite and PostgreSQL have.

A plate is stored under keys: its text with each group of look-alike characters (plates.recognition.edits'
LOOK_ALIKE: 0, O and C; 8, B and 6; ...) written as one, and that text with each character left out in turn. Two
texts share a key when one turns into the other by look-alike swaps and at most one deletion, one insertion or one
substitution (a substitution leaves out the same position of both): the searched text's own keys, looked up with an
indexed `IN`, find every such plate without reading the others. The candidates are then ranked by their
look-alike-aware distance (plates.recognition.edits.plate_distance), which is what decides.

This is the symmetric-deletion idea of SymSpell (Wolf Garbe), at distance one: trigram indexes (PostgreSQL's
pg_trgm, which ALPR-Database uses) have no SQLite counterpart and score a 9-character plate's one wrong character
as a third of its trigrams gone.
"""

from __future__ import annotations

from plates.recognition.edits import LOOK_ALIKE

# Each look-alike group written as its smallest character; groups are joined where pairs share a character.
_groups: list[set[str]] = []
for _pair in LOOK_ALIKE:
    _joined = [group for group in _groups if group & _pair]
    _merged = set(_pair).union(*_joined)
    _groups = [group for group in _groups if group not in _joined] + [_merged]
ONE_OF_A_KIND = str.maketrans({char: min(group) for group in _groups for char in group})


def skeleton(text: str) -> str:
    """`text` with every look-alike written as its group's one character."""
    return text.translate(ONE_OF_A_KIND)


def keys(text: str) -> set[str]:
    """The keys `text` is stored and searched under: its skeleton, and the skeleton less each character in turn."""
    base = skeleton(text)
    return {base} | {base[:i] + base[i + 1 :] for i in range(len(base))}
