"""The fewest edits between two texts (Levenshtein), for every caller that compares plate texts: the watchlist's
fuzzy match (look-alike characters cost less) and the report of which characters a reader confuses.

Insertions and deletions cost 1; a substitution costs what the caller's `substitution_cost` says.
"""

from __future__ import annotations

from collections.abc import Callable

SubstitutionCost = Callable[[str, str], float]


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
