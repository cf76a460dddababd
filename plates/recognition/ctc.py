"""CTC decoding of LPRNet's logits ([classes, time] per plate) into plate text, constrained to plate formats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from plates.recognition.alphabet import ALPHABET, BLANK
from plates.recognition.formats import is_plate_prefix, is_valid_plate

DEFAULT_BEAM_WIDTH = 10


@dataclass(frozen=True)
class Reading:
    """Every valid plate text the search found, with its probability, likeliest first; empty where none."""

    candidates: tuple[tuple[str, float], ...] = ()

    @property
    def text(self) -> str:
        """The likeliest valid plate, "" where the logits support none."""
        return self.candidates[0][0] if self.candidates else ""

    @property
    def confidence(self) -> float:
        """Probability of `text` under the model (all frame paths summed), 0 where none."""
        return self.candidates[0][1] if self.candidates else 0.0


def log_softmax(logits: np.ndarray, axis: int) -> np.ndarray:
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def read_plates(logits: np.ndarray, beam_width: int = DEFAULT_BEAM_WIDTH) -> list[Reading]:
    """Decode a batch of logits shaped [N, classes, time] into plate readings.

    The search only grows prefixes of official plate formats, so a reading is never an impossible plate: a frame
    that best-path decoding would read as a stray extra digit loses to the likeliest text that is a plate.
    """
    if logits.ndim != 3 or logits.shape[1] != BLANK + 1:
        raise ValueError(f"expected logits shaped [N, {BLANK + 1}, T], got {list(logits.shape)}")
    readings = []
    for plate in log_softmax(logits.astype(np.float64), axis=1):
        beams = prefix_beam_search(plate, beam_width, is_plate_prefix)
        readings.append(Reading(tuple((t, float(np.exp(p))) for t, p in beams if is_valid_plate(t))))
    return readings


def vote(readings: Sequence[Reading], per_plate: int) -> list[Reading]:
    """One reading per plate from `per_plate` readings of each (consecutive): every text any of them found, with
    its probability summed over them and spread over all the plate's readings, likeliest first.

    Summing every text a cut found, not only its best, ranks the runners-up too; on the dev sets it picked the
    same text as summing each cut's best only, for every plate (README, Candidates and phantom texts).
    """
    if per_plate < 1 or len(readings) % per_plate:
        raise ValueError(f"{len(readings)} readings do not split into groups of {per_plate}")
    voted = []
    for start in range(0, len(readings), per_plate):
        totals: dict[str, float] = {}
        for reading in readings[start : start + per_plate]:
            for text, probability in reading.candidates:
                totals[text] = totals.get(text, 0.0) + probability
        ranked = sorted(totals.items(), key=lambda item: -item[1])
        voted.append(Reading(tuple((text, total / per_plate) for text, total in ranked)))
    return voted


def _log_add(a: float, b: float) -> float:
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    return max(a, b) + np.log1p(np.exp(-abs(a - b)))


def prefix_beam_search(
    log_probs: np.ndarray, beam_width: int, allowed: Callable[[str], bool], labels_per_frame: int = 4
) -> list[tuple[str, float]]:
    """CTC prefix beam search over one plate's log-probabilities [classes, time].

    Keeps, at every frame, the `beam_width` likeliest label prefixes that `allowed` accepts, each scored by the
    total probability of all frame paths that collapse to it (not only the best path). Only the
    `labels_per_frame` likeliest labels of a frame extend a prefix: the rest hold too little probability to matter,
    and skipping them keeps a plate's search to about a millisecond. Returns (text, log probability) pairs,
    likeliest first.
    """
    # prefix -> (log P(paths ending in blank), log P(paths ending in the prefix's last label))
    beams: dict[str, tuple[float, float]] = {"": (0.0, -np.inf)}
    for frame in log_probs.T:
        likely = [int(i) for i in np.argsort(-frame[:BLANK])[:labels_per_frame]]
        candidates: dict[str, list[float]] = {}

        def add(prefix: str, blank: float, label: float) -> None:
            entry = candidates.setdefault(prefix, [-np.inf, -np.inf])
            entry[0] = _log_add(entry[0], blank)
            entry[1] = _log_add(entry[1], label)

        for prefix, (blank, label) in beams.items():
            total = _log_add(blank, label)
            add(prefix, total + frame[BLANK], -np.inf)
            if prefix:
                add(prefix, -np.inf, label + frame[ALPHABET.index(prefix[-1])])
            for index in likely:
                char = ALPHABET[index]
                extended = prefix + char
                if not allowed(extended):
                    continue
                # A repeated label needs a blank between: only paths ending in blank extend to it.
                source = blank if prefix and prefix[-1] == char else total
                add(extended, -np.inf, source + frame[index])
        ranked = sorted(candidates.items(), key=lambda item: -_log_add(*item[1]))
        beams = {prefix: (scores[0], scores[1]) for prefix, scores in ranked[:beam_width]}
    return [(prefix, _log_add(*scores)) for prefix, scores in beams.items()]
