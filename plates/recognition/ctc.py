"""CTC decoding of LPRNet's logits ([classes, time] per plate) into plate text, constrained to plate formats."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from plates.recognition.alphabet import ALPHABET, BLANK
from plates.recognition.formats import ONE_LINE, Grammar

DEFAULT_BEAM_WIDTH = 10
_INDEX = {char: index for index, char in enumerate(ALPHABET)}


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


def read_plates(logits: np.ndarray, beam_width: int = DEFAULT_BEAM_WIDTH, grammar: Grammar = ONE_LINE) -> list[Reading]:
    """Decode a batch of logits shaped [N, classes, time] into plate readings.

    The search only grows prefixes of the `grammar`'s plate formats, so a reading is never an impossible plate: a
    frame that best-path decoding would read as a stray extra digit loses to the likeliest text that is a plate.
    """
    if logits.ndim != 3 or logits.shape[1] != BLANK + 1:
        raise ValueError(f"expected logits shaped [N, {BLANK + 1}, T], got {list(logits.shape)}")
    readings = []
    for plate in log_softmax(logits.astype(np.float64), axis=1):
        beams = prefix_beam_search(plate, beam_width, grammar.is_prefix)
        readings.append(Reading(tuple((t, math.exp(p)) for t, p in beams if grammar.allows(t))))
    return readings


def vote(readings: Sequence[Reading], per_plate: int) -> list[Reading]:
    """One reading per plate from `per_plate` readings of each (consecutive): every text any of them found, with
    its probability summed over them and spread over all the plate's readings, likeliest first.

    Summing every text a cut found, not only its best, ranks the runners-up too; on the dev sets it picked the
    same text as summing each cut's best only, for every plate (docs/performance.md, Accuracy).
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
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


def prefix_beam_search(
    log_probs: np.ndarray, beam_width: int, allowed: Callable[[str], bool], labels_per_frame: int = 4
) -> list[tuple[str, float]]:
    """CTC prefix beam search over one plate's log-probabilities [classes, time].

    Keeps, at every frame, the `beam_width` likeliest label prefixes that `allowed` accepts, each scored by the
    total probability of all frame paths that collapse to it (not only the best path). Only the
    `labels_per_frame` likeliest labels of a frame extend a prefix: the rest hold too little probability to matter,
    and skipping them keeps a plate's search to a fraction of a millisecond. Returns (text, log probability) pairs,
    likeliest first.
    """
    # Every frame's likeliest labels in one call: the same sort as one frame at a time, so the same picks among ties.
    likeliest = np.argsort(-log_probs[:BLANK].T, axis=1)[:, :labels_per_frame].tolist()
    # prefix -> (log P(paths ending in blank), log P(paths ending in the prefix's last label), log P(all its paths))
    beams: dict[str, tuple[float, float, float]] = {"": (0.0, -math.inf, 0.0)}
    # Python floats: numpy's scalar maths would cost several times the search itself.
    for frame, likely in zip(log_probs.T.tolist(), likeliest):
        # Each beam's paths that stay on its prefix: through a blank, or repeating its last label.
        stays = [
            (prefix, blank, total, total + frame[BLANK], label + frame[_INDEX[prefix[-1]]] if prefix else -math.inf)
            for prefix, (blank, label, total) in beams.items()
        ]
        # A beam's prefix scores at least the likelier of its two ways of staying (_log_add never falls below its
        # larger term), so with a full beam, the next one needs at least the least of those. A prefix no beam holds
        # is reached by one step only, which is its score: below that floor it cannot make the next beam.
        floor = -math.inf
        if len(beams) == beam_width:
            floor = min((max(blanked, repeated) for *_, blanked, repeated in stays), default=floor)
        picks = [(ALPHABET[index], frame[index]) for index in likely]
        # prefix -> [log P(ending in blank), log P(ending in its last label)], in the order prefixes are first
        # reached, which the stable sort below keeps among equal scores. Paths ending in blank come from the
        # prefix's own beam only; those ending in its label from it and from the beam one label shorter.
        candidates: dict[str, list[float]] = {}
        for prefix, blank, total, blanked, repeated in stays:
            last = prefix[-1:]
            entry = candidates.get(prefix)
            if entry is None:
                candidates[prefix] = [blanked, repeated]
            else:
                entry[0] = blanked
                entry[1] = _log_add(entry[1], repeated)
            for char, log_prob in picks:
                # A repeated label needs a blank between: only paths ending in blank extend to it.
                step = log_prob + (blank if char == last else total)
                extended = prefix + char
                if step < floor and extended not in beams or not allowed(extended):
                    continue
                entry = candidates.get(extended)
                if entry is None:
                    candidates[extended] = [-math.inf, step]
                else:
                    entry[1] = _log_add(entry[1], step)
        scored = [(prefix, blank, label, _log_add(blank, label)) for prefix, (blank, label) in candidates.items()]
        scored.sort(key=itemgetter(3), reverse=True)
        beams = {prefix: (blank, label, total) for prefix, blank, label, total in scored[:beam_width]}
    return [(prefix, total) for prefix, (_, _, total) in beams.items()]
