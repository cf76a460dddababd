import numpy as np
import pytest

from plates.recognition.alphabet import ALPHABET, BLANK, NUM_CLASSES
from plates.recognition.ctc import collapse, greedy_decode


def logits_for(path: list[int], frames: int = 18) -> np.ndarray:
    """Logits whose best path is `path` padded with blanks to `frames`."""
    path = path + [BLANK] * (frames - len(path))
    logits = np.full((NUM_CLASSES, frames), -5.0, dtype=np.float32)
    logits[path, np.arange(frames)] = 5.0
    return logits


def indices(text: str) -> list[int]:
    """The frame path of `text`, with a blank between doubled characters as CTC needs."""
    path: list[int] = []
    for c in text:
        if path and path[-1] == ALPHABET.index(c):
            path.append(BLANK)
        path.append(ALPHABET.index(c))
    return path


def test_collapse_merges_repeats_and_drops_blanks():
    b, eight = ALPHABET.index("B"), ALPHABET.index("8")
    path = np.array([b, b, BLANK, eight, eight, BLANK, BLANK, eight])
    assert collapse(path) == "B88"


def test_greedy_decode_reads_a_plate_with_a_doubled_letter():
    path = indices("B840CCK197")
    assert path.count(BLANK) == 1
    readings = greedy_decode(logits_for(path)[None])
    assert readings[0].text == "B840CCK197"
    assert readings[0].log_likelihood < 0


def test_greedy_decode_gives_higher_likelihood_to_a_confident_path():
    sure = logits_for(indices("A123BC77"))
    unsure = sure * 0.2
    a, b = greedy_decode(np.stack([sure, unsure]))
    assert a.text == b.text == "A123BC77"
    assert a.log_likelihood > b.log_likelihood


def test_greedy_decode_rejects_wrong_class_count():
    with pytest.raises(ValueError, match=r"expected logits shaped \[N, 23, T\]"):
        greedy_decode(np.zeros((1, 22, 18), np.float32))
