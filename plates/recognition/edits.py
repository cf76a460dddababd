"""The fewest edits between two texts (Levenshtein), for every caller that compares plate texts: the watchlist's
fuzzy match and the store's search and visits (look-alike characters cost less: plate_distance), and the report of
which characters a reader confuses.

Insertions and deletions cost 1; a substitution costs what the caller's `substitution_cost` says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SubstitutionCost = Callable[[str, str], float]

LOOK_ALIKE_COST = 0.5
# Pairs of the recognizer's alphabet (digits and the Latin look-alikes of the plate's Cyrillic letters) that look
# alike in a small or blurred plate.
LOOK_ALIKE = {frozenset(pair) for pair in ("0O", "OC", "8B", "6B", "7T", "4A", "HM", "KX")}
# The plate's letters typed in Cyrillic become their Latin look-alikes, as the recognizer writes them.
CYRILLIC_LETTERS = "АВЕКМНОРСТУХавекмнорстух"
CYRILLIC = str.maketrans(CYRILLIC_LETTERS, "ABEKMHOPCTYX" * 2)


def unit_cost(a: str, b: str) -> float:
    return 0.0 if a == b else 1.0


def edit_costs(a: str, b: str, substitution_cost: SubstitutionCost = unit_cost) -> list[list[float]]:
    """cost[i][j]: the least cost of the edits that turn a[:i] into b[:j]."""
    cost = [[float(i + j) if i == 0 or j == 0 else 0.0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost[i][j] = min(
                cost[i - 1][j - 1] + substitution_cost(a[i - 1], b[j - 1]), cost[i - 1][j] + 1, cost[i][j - 1] + 1
            )
    return cost


def distance(a: str, b: str, substitution_cost: SubstitutionCost = unit_cost) -> float:
    return edit_costs(a, b, substitution_cost)[-1][-1]


def alignment(expected: str, got: str) -> list[tuple[str, str]]:
    """The fewest edits that turn `expected` into `got`, as (expected char, got char) pairs; '_' where a side has
    none. Equal characters are left out. Ties prefer substitutions, then deletions: the same pairs every time."""
    cost = edit_costs(expected, got)
    pairs, i, j = [], len(expected), len(got)
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + unit_cost(expected[i - 1], got[j - 1]):
            if expected[i - 1] != got[j - 1]:
                pairs.append((expected[i - 1], got[j - 1]))
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            pairs.append((expected[i - 1], "_"))
            i -= 1
        else:
            pairs.append(("_", got[j - 1]))
            j -= 1
    return pairs[::-1]


def normalize_plate(text: str) -> str:
    """Upper case, Cyrillic letters as their Latin look-alikes, no spaces or dashes: `а 505 ро 198` -> A505PO198."""
    return re.sub(r"[\s-]", "", text).translate(CYRILLIC).upper()


def look_alike_cost(a: str, b: str) -> float:
    if a == b:
        return 0.0
    return LOOK_ALIKE_COST if frozenset((a, b)) in LOOK_ALIKE else 1.0


def plate_distance(a: str, b: str) -> float:
    """Levenshtein distance with look-alike substitutions at LOOK_ALIKE_COST."""
    return distance(a, b, look_alike_cost)
