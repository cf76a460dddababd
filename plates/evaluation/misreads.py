"""Where reading fails: each misread split by part of the plate (main field, region code), and the characters confused.

A plate text is a main field (`B840CK`) and a region code (`197`), as plates.recognition.formats splits it. A reading is
compared with its label part by part, each part aligned with the fewest edits (plates.recognition.edits), so that a
digit added to the region (`77` read `772`) shows as an insertion, not as two wrong characters. Confusions are written
`8>6` (the label's 8 read as 6), `7>_` (a 7 left out) and `_>2` (a 2 read where there is none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from plates.recognition.edits import alignment, distance
from plates.recognition.formats import region_code

PARTS = ("main", "region")
OUTCOMES = ("right", "region only", "main field only", "both", "unread")


def split(text: str) -> tuple[str, str] | None:
    """(main field, region code) of a plate text, None where it is no Russian plate."""
    region = region_code(text)
    return None if region is None else (text[: len(text) - len(region)], region)


@dataclass
class Misreads:
    """Readings compared with their labels: how many were right, which part was wrong, and the confusions."""

    outcomes: Counter = field(default_factory=Counter)  # OUTCOMES -> count
    confusions: dict[str, Counter] = field(default_factory=lambda: {part: Counter() for part in PARTS})
    examples: list[tuple[str, str]] = field(default_factory=list)  # (expected, got) of every wrong reading

    @property
    def compared(self) -> int:
        return sum(self.outcomes.values())

    def add(self, expected: str, got: str | None) -> None:
        """One labelled text against what was read of it ("" or None: read as no plate)."""
        if got == expected:
            self.outcomes["right"] += 1
            return
        self.examples.append((expected, got or ""))
        truth, read = split(expected), split(got or "")
        if truth is None or read is None:
            self.outcomes["unread" if read is None else "both"] += 1
            return
        wrong = [part for part, a, b in zip(PARTS, truth, read) if a != b]
        self.outcomes[{("region",): "region only", ("main",): "main field only"}.get(tuple(wrong), "both")] += 1
        for part, a, b in zip(PARTS, truth, read):
            self.confusions[part].update(f"{x}>{y}" for x, y in alignment(a, b))

    def to_dict(self) -> dict:
        return {
            "compared": self.compared,
            "outcomes": {outcome: self.outcomes[outcome] for outcome in OUTCOMES},
            "confusions": {part: dict(self.confusions[part].most_common()) for part in PARTS},
            "misread": [{"expected": a, "got": b} for a, b in self.examples],
        }

    def format(self, top: int = 8) -> list[str]:
        if not self.compared:
            return []
        outcomes = ", ".join(f"{outcome} {self.outcomes[outcome]}" for outcome in OUTCOMES)
        lines = [f"where reading fails ({self.compared} texts compared): {outcomes}"]
        for part in PARTS:
            confused = ", ".join(f"{pair} {n}" for pair, n in self.confusions[part].most_common(top))
            lines.append(f"  confused in the {'main field' if part == 'main' else 'region code'}: {confused or 'none'}")
        return lines


def nearest(expected: str, returned: Iterable[str]) -> str | None:
    """The returned text closest to `expected` (fewest edits; the first of equals), None where none was returned."""
    return min(returned, key=lambda text: distance(expected, text), default=None)
