import numpy as np
import pytest
import torch

from plates.exceptions import SubModelError
from plates.recognition.alphabet import ALPHABET, BLANK, NUM_CLASSES
from plates.recognition.ctc import Reading
from plates.serving.pipeline import pad_candidates, recognize


def logits_reading(text: str) -> torch.Tensor:
    path = []
    for c in text:
        path += [BLANK, ALPHABET.index(c)] if path and path[-1] == ALPHABET.index(c) else [ALPHABET.index(c)]
    path += [BLANK] * (18 - len(path))
    logits = torch.full((NUM_CLASSES, 18), -5.0)
    logits[path, torch.arange(18)] = 5.0
    return logits


class FakeModels:
    """Stands in for Triton's BLS calls: records them and answers like the real models."""

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.calls: list[tuple[str, int]] = []

    def __call__(self, model, inputs, outputs):
        batch = inputs["input__0"]
        self.calls.append((model, batch.shape[0]))
        if model == "yolo":
            n = len(self.texts)
            return {
                "output__0": torch.zeros(n, 3, 24, 94),
                "output__1": torch.arange(n * 4, dtype=torch.float32).reshape(n, 4),
                "output__2": torch.linspace(0.9, 0.5, n),
            }
        if model == "stn":
            return {"output__0": batch + 1}
        start = sum(size for name, size in self.calls[:-1] if name == "lprnet")
        return {"output__0": torch.stack([logits_reading(t) for t in self.texts[start : start + batch.shape[0]]])}


def test_recognize_returns_valid_texts_and_blanks_invalid_ones():
    models = FakeModels(["B840CK197", "B840"])
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=32)
    assert plates.texts == ["B840CK197", ""]
    assert plates.boxes.shape == (2, 4) and plates.boxes.dtype == np.float32
    np.testing.assert_allclose(plates.scores, [0.9, 0.5])


def test_recognize_skips_stn_and_lprnet_when_nothing_is_detected():
    models = FakeModels([])
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=32)
    assert models.calls == [("yolo", 10)]
    assert plates.boxes.shape == (0, 4) and plates.texts == [] and plates.scores.shape == (0,)


def test_recognize_splits_crops_into_batches_the_recognizer_accepts():
    models = FakeModels(["A123BC77"] * 5)
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=2)
    assert [c for c in models.calls if c[0] == "lprnet"] == [("lprnet", 2), ("lprnet", 2), ("lprnet", 1)]
    assert plates.texts == ["A123BC77"] * 5


def test_recognize_lets_a_sub_model_error_through():
    def failing(model, inputs, outputs):
        raise SubModelError(model, "out of memory")

    with pytest.raises(SubModelError, match="model 'yolo' failed: out of memory"):
        recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), failing, max_batch_size=32)


def test_recognize_votes_over_the_cuts_of_each_plate():
    class ThreeCuts(FakeModels):
        def __call__(self, model, inputs, outputs):
            answer = super().__call__(model, inputs, outputs)
            if model == "yolo":  # two boxes, three crops each
                answer["output__0"] = torch.zeros(6, 3, 24, 94)
                answer["output__1"] = answer["output__1"][:2]
                answer["output__2"] = answer["output__2"][:2]
            return answer

    models = ThreeCuts(["B840OK197", "B840CK197", "B840CK197", "A123BC78", "", "A123BC78"])
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=32)
    assert plates.texts == ["B840CK197", "A123BC78"]
    assert plates.text_scores.shape == (2,) and plates.boxes.shape == (2, 4)


def test_recognize_pads_each_plates_candidates_to_k():
    models = FakeModels(["B840CK197", "B840"])
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=32, candidates=3)
    assert plates.candidates.shape == plates.candidate_scores.shape == (2, 3)
    assert plates.candidates[0, 0] == "B840CK197" and plates.candidate_scores[0, 0] == plates.text_scores[0]
    assert plates.candidates[1].tolist() == ["", "", ""] and plates.candidate_scores[1].tolist() == [0, 0, 0]
    assert plates.candidate_scores.dtype == np.float32


def test_recognize_without_plates_answers_candidates_shaped_zero_by_k():
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), FakeModels([]), max_batch_size=32, candidates=4)
    assert plates.candidates.shape == plates.candidate_scores.shape == (0, 4)


def test_pad_candidates_keeps_the_k_likeliest_and_pads_the_rest():
    readings = [Reading((("A123BC77", 0.5), ("A123BC777", 0.2), ("A128BC77", 0.1))), Reading((("X777AM777", 0.9),))]
    texts, scores = pad_candidates(readings, 2)
    assert texts.tolist() == [["A123BC77", "A123BC777"], ["X777AM777", ""]]
    np.testing.assert_allclose(scores, [[0.5, 0.2], [0.9, 0.0]])


def test_recognize_blanks_a_text_scored_below_min_text_score_but_keeps_its_candidates():
    class UnsureOfTheSecond(FakeModels):
        def __call__(self, model, inputs, outputs):
            answer = super().__call__(model, inputs, outputs)
            if model == "lprnet":
                answer["output__0"][1] *= 0.4  # the same best path, with a low probability
            return answer

    models = UnsureOfTheSecond(["B840CK197", "A123BC77"])
    plates = recognize(torch.zeros(10, 10, 3, dtype=torch.uint8), models, max_batch_size=32, min_text_score=0.5)
    assert plates.texts == ["B840CK197", ""]
    assert plates.text_scores[0] > 0.5 and plates.text_scores[1] == 0.0
    assert plates.candidates[1, 0] == "A123BC77" and 0 < plates.candidate_scores[1, 0] < 0.5
