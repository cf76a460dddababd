import json
from pathlib import Path

import numpy as np
import pytest

from plates.recognition.alphabet import ALPHABET, BLANK, NUM_CLASSES
from plates.recognition.ctc import Reading, log_softmax, prefix_beam_search, read_plates, vote
from plates.recognition.formats import ONE_LINE

DATA = Path(__file__).parent / "data"


def indices(text: str) -> list[int]:
    """The frame path of `text`, with a blank between doubled characters as CTC needs."""
    path: list[int] = []
    for c in text:
        if path and path[-1] == ALPHABET.index(c):
            path.append(BLANK)
        path.append(ALPHABET.index(c))
    return path


def logits_for(path: list[int], frames: int = 18, sure: float = 5.0) -> np.ndarray:
    """Logits whose best path is `path` padded with blanks to `frames`."""
    path = path + [BLANK] * (frames - len(path))
    logits = np.full((NUM_CLASSES, frames), -sure, dtype=np.float32)
    logits[path, np.arange(frames)] = sure
    return logits


def test_read_plates_reads_doubled_characters_separated_by_blanks():
    [reading] = read_plates(logits_for(indices("X777AM777"))[None])
    assert reading.text == "X777AM777"
    assert 0.5 < reading.confidence <= 1.0


def test_read_plates_drops_a_stray_character_that_breaks_the_format():
    # Best path reads E677MC463 (region 463 does not exist); the runner-up at the stray frame is a blank.
    logits = logits_for(indices("E677MC463"))
    stray = indices("E677MC463").index(ALPHABET.index("4"), 6)
    logits[BLANK, stray] = 4.0
    [reading] = read_plates(logits[None])
    assert reading.text == "E677MC63"


def test_read_plates_gives_lower_confidence_to_an_uncertain_plate():
    sure, unsure = read_plates(np.stack([logits_for(indices("A123BC77")), logits_for(indices("A123BC77"), sure=1.0)]))
    assert sure.text == unsure.text == "A123BC77"
    assert sure.confidence > unsure.confidence


def test_read_plates_answers_empty_when_no_plate_fits():
    [reading] = read_plates(logits_for(indices("1"))[None] * 0 + logits_for([BLANK] * 18)[None])
    assert reading.text == "" and reading.confidence == 0.0


def test_prefix_beam_search_sums_the_paths_of_a_labelling():
    # Two frames, each 50/50 between "7" and blank: "7" is reached by 3 of the 4 paths.
    log_probs = np.full((NUM_CLASSES, 2), -np.inf)
    log_probs[[ALPHABET.index("7"), BLANK], :] = np.log(0.5)
    results = dict(prefix_beam_search(log_probs, beam_width=5, allowed=lambda prefix: True))
    assert np.exp(results["7"]) == pytest.approx(0.75)
    assert np.exp(results[""]) == pytest.approx(0.25)


def test_read_plates_rejects_wrong_class_count():
    with pytest.raises(ValueError, match=r"expected logits shaped \[N, 23, T\]"):
        read_plates(np.zeros((1, 22, 18), np.float32))


def test_is_plate_prefix_follows_the_formats():
    assert ONE_LINE.is_prefix("") and ONE_LINE.is_prefix("B840") and ONE_LINE.is_prefix("B840CK19")
    assert ONE_LINE.is_prefix("B8400")  # police: A1234 77
    assert not ONE_LINE.is_prefix("B840C0") and not ONE_LINE.is_prefix("8B")
    assert not ONE_LINE.is_prefix("B840CK1977")
    assert log_softmax(np.zeros((2, 1)), 0)[0, 0] == pytest.approx(np.log(0.5))


def test_read_plates_lists_every_valid_text_of_the_beam_likeliest_first():
    logits = logits_for(indices("B840CK197"))
    logits[ALPHABET.index("O"), indices("B840CK197").index(ALPHABET.index("C"))] = 4.0
    [reading] = read_plates(logits[None])
    texts = [text for text, _ in reading.candidates]
    assert texts[:2] == ["B840CK197", "B840OK197"]
    assert reading.text == "B840CK197" and reading.confidence == reading.candidates[0][1]
    scores = [score for _, score in reading.candidates]
    assert scores == sorted(scores, reverse=True) and sum(scores) <= 1.0


def test_read_plates_reads_stored_cuts_as_the_pure_python_decoder_did():
    # Real cuts and their readings by the first decoder (convert/store_ctc_logits.py): car.jpg's, the closest calls
    # between two texts (where a change in tie order or rounding would show), and a spread of the rest.
    expected = [cut["candidates"] for cut in json.loads((DATA / "ctc_readings.json").read_text())]
    readings = read_plates(np.load(DATA / "ctc_logits.npy"))
    assert len(readings) == len(expected)
    for reading, candidates in zip(readings, expected):
        assert [text for text, _ in reading.candidates] == [text for text, _ in candidates]
        assert [p for _, p in reading.candidates] == pytest.approx([p for _, p in candidates], rel=1e-9, abs=0)


def read(*candidates: tuple[str, float]) -> Reading:
    return Reading(tuple(candidates))


def test_vote_keeps_the_text_the_cuts_agree_on():
    readings = [read(("B840OK197", 0.6)), read(("B840CK197", 0.5)), read(("B840CK197", 0.4))]
    readings += [read(), read(), read(("A123BC77", 0.3))]
    first, second = vote(readings, per_plate=3)
    assert first.text == "B840CK197" and first.confidence == pytest.approx(0.3)
    assert second.text == "A123BC77" and second.confidence == pytest.approx(0.1)


def test_vote_ranks_every_text_of_every_cut_by_its_summed_probability():
    readings = [read(("B840OK197", 0.6), ("B840CK197", 0.3)), read(("B840CK197", 0.5), ("B840OK197", 0.1))]
    [plate] = vote(readings, per_plate=2)
    assert [text for text, _ in plate.candidates] == ["B840CK197", "B840OK197"]
    assert [score for _, score in plate.candidates] == pytest.approx([0.4, 0.35])


def test_vote_of_unread_cuts_is_unread_and_groups_must_divide():
    assert vote([read()] * 2, per_plate=2) == [read()]
    assert vote([read()] * 2, per_plate=2)[0].text == "" and read().confidence == 0.0
    with pytest.raises(ValueError, match="5 readings do not split into groups of 2"):
        vote([read()] * 5, per_plate=2)
