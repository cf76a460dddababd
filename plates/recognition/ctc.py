"""CTC decoding of LPRNet's logits ([classes, time] per plate) into plate text."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plates.recognition.alphabet import ALPHABET, BLANK


@dataclass(frozen=True)
class Reading:
    text: str
    log_likelihood: float  # of the best path, summed over time steps


def log_softmax(logits: np.ndarray, axis: int) -> np.ndarray:
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def collapse(path: np.ndarray) -> str:
    """Merge repeats, then drop blanks: the CTC rule that maps a frame path to a label sequence."""
    text = []
    previous = None
    for index in path.tolist():
        if index != previous and index != BLANK:
            text.append(ALPHABET[index])
        previous = index
    return "".join(text)


def greedy_decode(logits: np.ndarray) -> list[Reading]:
    """Best-path decoding of a batch of logits shaped [N, classes, time]."""
    if logits.ndim != 3 or logits.shape[1] != BLANK + 1:
        raise ValueError(f"expected logits shaped [N, {BLANK + 1}, T], got {list(logits.shape)}")
    log_probs = log_softmax(logits.astype(np.float64), axis=1)
    paths = log_probs.argmax(axis=1)
    best = log_probs.max(axis=1).sum(axis=1)
    return [Reading(collapse(path), float(score)) for path, score in zip(paths, best)]
