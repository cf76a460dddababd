import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest
import torch

from plates.exceptions import InvalidInputError, ModelConfigError, SubModelError
from plates.inference.pipeline import FirstLook, RecognitionSettings, pad_candidates, recognize
from plates.recognition.alphabet import ALPHABET, BLANK, NUM_CLASSES
from plates.recognition.ctc import Reading

PHOTO = {"input__0": torch.zeros(10, 10, 3, dtype=torch.uint8)}


def logits_reading(text: str, sure: float = 5.0) -> torch.Tensor:
    path = []
    for c in text:
        path += [BLANK, ALPHABET.index(c)] if path and path[-1] == ALPHABET.index(c) else [ALPHABET.index(c)]
    path += [BLANK] * (18 - len(path))
    logits = torch.full((NUM_CLASSES, 18), -sure)
    logits[path, torch.arange(18)] = sure
    return logits


SETTINGS = RecognitionSettings(max_batch_size=32)


class FakeModels:
    """Stands in for Triton's BLS calls: records them and answers like the real models."""

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.calls: list[tuple[str, int]] = []  # model, items (one photo for yolo)
        self.inputs: list[dict] = []

    def __call__(self, model, inputs, outputs):
        self.inputs.append(inputs)
        if model == "yolo":
            self.calls.append((model, 1))
            n = len(self.texts)
            return {
                "output__0": torch.zeros(n, 3, 24, 94),
                "output__1": torch.arange(n * 4, dtype=torch.float32).reshape(n, 4),
                "output__2": torch.linspace(0.9, 0.5, n),
                "output__3": torch.ones(n, dtype=torch.int64),
                "output__4": torch.arange(n),
            }
        batch = inputs["input__0"]
        self.calls.append((model, batch.shape[0]))
        if model == "stn":
            return {"output__0": batch + 1}
        start = sum(size for name, size in self.calls[:-1] if name == "lprnet")
        return {"output__0": torch.stack([logits_reading(t) for t in self.texts[start : start + batch.shape[0]]])}


def test_recognize_returns_valid_texts_and_blanks_invalid_ones():
    models = FakeModels(["B840CK197", "B840"])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32))
    assert plates.texts == ["B840CK197", ""]
    assert plates.boxes.shape == (2, 4) and plates.boxes.dtype == np.float32
    np.testing.assert_allclose(plates.scores, [0.9, 0.5])


def test_recognize_skips_stn_and_lprnet_when_nothing_is_detected():
    models = FakeModels([])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32))
    assert models.calls == [("yolo", 1)]
    assert plates.boxes.shape == (0, 4) and plates.texts == [] and plates.scores.shape == (0,)


def test_recognize_splits_crops_into_batches_the_recognizer_accepts():
    models = FakeModels(["A123BC77"] * 5)
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=2))
    assert [c for c in models.calls if c[0] == "lprnet"] == [("lprnet", 2), ("lprnet", 2), ("lprnet", 1)]
    assert plates.texts == ["A123BC77"] * 5


def test_recognize_lets_a_sub_model_error_through():
    def failing(model, inputs, outputs):
        raise SubModelError(model, "out of memory")

    with pytest.raises(SubModelError, match="model 'yolo' failed: out of memory"):
        recognize(PHOTO, failing, RecognitionSettings(max_batch_size=32))


def test_recognize_passes_a_photo_file_on_to_yolo_as_it_came(samples):
    models = FakeModels([])
    data = (samples / "car.jpg").read_bytes()
    recognize({"image_bytes": np.array([data], dtype=np.object_)}, models, SETTINGS)
    assert models.calls == [("yolo", 1)] and models.inputs[0]["image_bytes"][0] is data


def test_recognize_reads_a_files_header_before_calling_yolo():
    models = FakeModels([])
    photo = {"image_bytes": np.array([b"GIF89a, or so it says"], dtype=np.object_)}
    with pytest.raises(InvalidInputError, match="image_bytes is not a JPEG or PNG image"):
        recognize(photo, models, SETTINGS)
    assert models.calls == []


def test_recognize_answers_a_file_yolo_could_not_decode_as_the_clients_fault(samples):
    # Triton 2.51 hands a BLS caller every sub-model error as INTERNAL: yolo's own message says what it was.
    def failing(model, inputs, outputs):
        raise SubModelError(model, "yolo: image_bytes is a corrupt or truncated PNG: bad adaptive filter value")

    photo = {"image_bytes": np.array([(samples / "car.jpg").read_bytes()], dtype=np.object_)}
    with pytest.raises(InvalidInputError) as error:
        recognize(photo, failing, SETTINGS)
    assert str(error.value) == "image_bytes is a corrupt or truncated PNG: bad adaptive filter value"


def test_recognize_answers_a_yolo_fault_on_a_file_as_the_services(samples):
    def failing(model, inputs, outputs):
        raise SubModelError(model, "yolo: internal error: RuntimeError: image_bytes went missing")

    photo = {"image_bytes": np.array([(samples / "car.jpg").read_bytes()], dtype=np.object_)}
    with pytest.raises(SubModelError, match="internal error"):
        recognize(photo, failing, SETTINGS)


def test_recognize_votes_over_the_cuts_of_each_plate():
    class ThreeCuts(FakeModels):
        def __call__(self, model, inputs, outputs):
            answer = super().__call__(model, inputs, outputs)
            if model == "yolo":  # two boxes, three crops each
                answer["output__0"] = torch.zeros(6, 3, 24, 94)
                answer["output__1"] = answer["output__1"][:2]
                answer["output__2"] = answer["output__2"][:2]
                answer["output__3"] = answer["output__3"][:2]
                answer["output__4"] = answer["output__4"][:2]
            return answer

    models = ThreeCuts(["B840OK197", "B840CK197", "B840CK197", "A123BC78", "", "A123BC78"])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32))
    assert plates.texts == ["B840CK197", "A123BC78"]
    assert plates.text_scores.shape == (2,) and plates.boxes.shape == (2, 4)


def test_recognize_pads_each_plates_candidates_to_k():
    models = FakeModels(["B840CK197", "B840"])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32, candidates=3))
    assert plates.candidates.shape == plates.candidate_scores.shape == (2, 3)
    assert plates.candidates[0, 0] == "B840CK197" and plates.candidate_scores[0, 0] == plates.text_scores[0]
    assert plates.candidates[1].tolist() == ["", "", ""] and plates.candidate_scores[1].tolist() == [0, 0, 0]
    assert plates.candidate_scores.dtype == np.float32


def test_recognize_without_plates_answers_candidates_shaped_zero_by_k():
    plates = recognize(PHOTO, FakeModels([]), RecognitionSettings(max_batch_size=32, candidates=4))
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
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32, min_text_score=0.5))
    assert plates.texts == ["B840CK197", ""]
    assert plates.text_scores[0] > 0.5 and plates.text_scores[1] == 0.0
    assert plates.candidates[1, 0] == "A123BC77" and 0 < plates.candidate_scores[1, 0] < 0.5


def test_a_plate_left_unread_is_answered_only_where_the_detector_scored_it_at_least_min_unread_score():
    texts = ["B840", "A123BC77", "C", "E001AA77"]  # scored 0.9, 0.77, 0.63 and 0.5 by the detector

    def plates_with(**settings):
        return recognize(PHOTO, FakeModels(texts), RecognitionSettings(max_batch_size=32, candidates=2, **settings))

    # A sign the detector doubts and nothing reads is no plate to answer; a doubted plate that reads is one.
    plates = plates_with(min_unread_score=0.7)
    assert plates.texts == ["", "A123BC77", "E001AA77"]
    np.testing.assert_allclose(plates.scores, [0.9, 0.9 - 0.4 / 3, 0.5], rtol=1e-6)
    np.testing.assert_array_equal(plates.boxes, np.arange(16, dtype=np.float32).reshape(4, 4)[[0, 1, 3]])
    assert plates.candidates.shape == plates.candidate_scores.shape == (3, 2) and plates.text_scores.shape == (3,)
    assert plates.candidates[2, 0] == "E001AA77"
    # A text blanked by min_text_score leaves its plate unread too.
    plates = plates_with(min_text_score=1.0, min_unread_score=0.7)
    assert plates.texts == ["", ""] and plates.boxes.shape == (2, 4)
    # None left: shaped as where yolo finds nothing.
    plates = plates_with(min_text_score=1.0, min_unread_score=1.0)
    assert plates.boxes.shape == (0, 4) and plates.texts == [] and plates.candidates.shape == (0, 2)
    assert len(plates_with().texts) == 4


class CutModels:
    """yolo cuts plate p len(cuts[p]) ways; crop i holds the number i, so lprnet reads cut i's text (text, sure)
    wherever it is sent, and records which cuts it read."""

    def __init__(self, cuts: list[list[tuple[str, float]]]):
        self.cuts = [cut for plate in cuts for cut in plate]
        self.plates = len(cuts)
        self.read: list[int] = []

    def __call__(self, model, inputs, outputs):
        batch = inputs["input__0"]
        if model == "yolo":
            crops = torch.arange(len(self.cuts), dtype=torch.float32).view(-1, 1, 1, 1).expand(-1, 3, 24, 94)
            return {
                "output__0": crops.contiguous(),
                "output__1": torch.zeros(self.plates, 4),
                "output__2": torch.ones(self.plates),
                "output__3": torch.ones(self.plates, dtype=torch.int64),
                "output__4": torch.arange(self.plates),
            }
        if model == "stn":
            return {"output__0": batch}
        cuts = batch[:, 0, 0, 0].long().tolist()
        self.read += cuts
        return {"output__0": torch.stack([logits_reading(*self.cuts[i]) for i in cuts])}


def recognize_cuts(models, first_look=None, max_batch_size=32):
    settings = RecognitionSettings(max_batch_size=max_batch_size, candidates=3, first_look=first_look)
    return recognize(PHOTO, models, settings)


def assert_same_plates(a, b):
    assert a.texts == b.texts and a.candidates.tolist() == b.candidates.tolist()
    np.testing.assert_allclose(a.text_scores, b.text_scores)
    np.testing.assert_allclose(a.candidate_scores, b.candidate_scores)


SURE, UNSURE = ("B840CK197", 5.0), ("B840CK197", 0.5)


def test_a_first_look_that_agrees_and_scores_high_settles_the_plate_with_its_cuts_alone():
    models = CutModels([[SURE, ("A123BC77", 5.0), SURE, SURE]])
    plates = recognize_cuts(models, FirstLook((0, 2), 0.5))
    assert sorted(models.read) == [0, 2]
    assert plates.texts == ["B840CK197"] and plates.text_scores[0] > 0.5


def test_a_first_look_that_disagrees_reads_every_cut_and_answers_as_without_it():
    cuts = [[SURE, ("B840OK197", 5.0), SURE, ("A123BC77", 5.0), SURE]]
    everything = recognize_cuts(CutModels(cuts))
    models = CutModels(cuts)
    plates = recognize_cuts(models, FirstLook((0, 1), 0.1))
    assert sorted(models.read) == [0, 1, 2, 3, 4]
    assert_same_plates(plates, everything)


def test_a_first_look_scored_under_its_minimum_reads_every_cut():
    cuts = [[UNSURE, UNSURE, SURE]]
    models = CutModels(cuts)
    plates = recognize_cuts(models, FirstLook((0, 1), 0.5))
    assert sorted(models.read) == [0, 1, 2]
    assert_same_plates(plates, recognize_cuts(CutModels(cuts)))


def test_a_first_look_where_one_cut_reads_no_plate_reads_every_cut():
    models = CutModels([[("B840", 5.0), SURE, SURE]])
    plates = recognize_cuts(models, FirstLook((0, 1), 0.0))
    assert sorted(models.read) == [0, 1, 2] and plates.texts == ["B840CK197"]


def test_a_first_look_that_finds_no_plate_text_at_all_gives_the_plate_up():
    models = CutModels([[("B840", 5.0), ("1", 5.0), SURE]])
    plates = recognize_cuts(models, FirstLook((0, 1), 0.0))
    assert sorted(models.read) == [0, 1]
    assert plates.texts == [""] and plates.text_scores.tolist() == [0.0]
    assert plates.candidates.tolist() == [["", "", ""]]


def test_the_first_look_reads_the_rest_only_of_the_plates_it_leaves_open_in_batches():
    cuts = [
        [SURE, SURE, ("A123BC77", 5.0)],  # settled by cuts 0 and 1
        [SURE, ("B840OK197", 5.0), ("B840OK197", 5.0)],  # left open
        [("X777AM777", 5.0)] * 3,  # settled
    ]
    models = CutModels(cuts)
    plates = recognize_cuts(models, FirstLook((0, 1), 0.5), max_batch_size=4)
    assert sorted(models.read) == [0, 1, 3, 4, 5, 6, 7]
    assert plates.texts == ["B840CK197", "B840OK197", "X777AM777"]
    open_plate = recognize_cuts(CutModels(cuts[1:2]))
    assert plates.texts[1] == open_plate.texts[0]
    np.testing.assert_allclose(plates.text_scores[1], open_plate.text_scores[0])


def test_a_first_look_naming_a_cut_yolo_does_not_make_is_a_config_error():
    with pytest.raises(ModelConfigError, match=r"'first_look_cuts' names cut 3, but yolo cuts each plate 3 ways"):
        recognize_cuts(CutModels([[SURE] * 3]), FirstLook((0, 3), 0.5))


class RowModels:
    """yolo cuts each plate twice, a two-line plate's rows apart in its 188 px crops; every row of every crop holds its
    own number (from 1: a one-line crop is zero past its row), and lprnet reads row n as `row_texts[n]`."""

    def __init__(self, plates: list[list[str]], plate_of: list[int] | None = None):
        self.lines = [len(rows) for rows in plates]
        self.plate_of = list(range(len(plates))) if plate_of is None else plate_of
        self.by_model: dict[str, list[str]] = {}
        self.crops = torch.zeros(2 * len(plates), 3, 24, 188)
        self.row_texts = [""]
        for plate, rows in enumerate(plates):
            for cut in range(2):
                for slot, text in enumerate(rows):
                    self.crops[2 * plate + cut, :, :, slot * 94 : (slot + 1) * 94] = len(self.row_texts)
                    self.row_texts.append(text)
        self.widths: set[int] = set()
        self.rows_read = 0

    def __call__(self, model, inputs, outputs):
        batch = inputs["input__0"]
        if model == "yolo":
            n = len(self.plate_of)  # one box and score for each way to read a plate: the way's index in the box
            return {
                "output__0": self.crops,
                "output__1": torch.arange(n).float()[:, None].expand(n, 4),
                "output__2": torch.ones(n),
                "output__3": torch.tensor(self.lines),
                "output__4": torch.tensor(self.plate_of),
            }
        self.widths.add(batch.shape[-1])
        if model == "stn":
            return {"output__0": batch}
        self.rows_read += batch.shape[0]
        texts = [self.row_texts[int(n)] for n in batch[:, 0, 0, 0]]
        self.by_model.setdefault(model, []).extend(texts)
        return {"output__0": torch.stack([logits_reading(text) for text in texts])}


@pytest.mark.parametrize("first_look", [None, FirstLook((0,), 0.0)])
def test_a_two_line_plates_rows_are_read_apart_and_decoded_as_one_text(first_look):
    models = RowModels([["A123BC77"], ["H701", "HE27"], ["8343", "AT50"]])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=4, first_look=first_look))
    assert plates.texts == ["A123BC77", "H701HE27", "8343AT50"]
    assert models.widths == {94}  # the recognizer sees one row at a time
    assert models.rows_read == (5 if first_look else 10)  # 1 + 2 + 2 rows a cut


def test_two_line_plates_rows_go_to_the_two_line_model_and_one_line_plates_to_lprnet():
    models = RowModels([["A123BC77"], ["H701", "HE27"], ["8343", "AT50"]])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=4, two_line_model="lprnet_rows"))
    assert plates.texts == ["A123BC77", "H701HE27", "8343AT50"]
    assert models.by_model == {"lprnet_rows": ["H701", "HE27"] * 2 + ["8343", "AT50"] * 2, "lprnet": ["A123BC77"] * 2}


def test_a_plate_read_two_ways_keeps_its_likelier_reading_and_its_box():
    # Plate 0 as one row (a reading that is no plate) and as two; plate 1 as one row, read well, and as two.
    models = RowModels([["H7"], ["H701", "HE27"], ["A123BC77"], ["A123", "BC77"]], plate_of=[0, 0, 1, 1])
    models.row_texts = [text if text != "A123" else "A" for text in models.row_texts]  # its rows make no plate
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32, two_line_model="lprnet_rows"))
    assert plates.texts == ["H701HE27", "A123BC77"]
    assert plates.boxes[:, 0].tolist() == [1, 2]  # the box each reading that stands cut
    assert plates.scores.shape == (2,) and plates.candidates.shape == (2, 1)


def test_a_two_line_model_of_other_frames_than_lprnets_is_named():
    class OtherFrames(RowModels):
        def __call__(self, model, inputs, outputs):
            answer = super().__call__(model, inputs, outputs)
            if model == "lprnet_rows":
                answer["output__0"] = answer["output__0"][..., :9]
            return answer

    models = OtherFrames([["A123BC77"], ["H701", "HE27"]])
    with pytest.raises(ModelConfigError, match=r"'lprnet_rows' \[23, 9\]: parameter 'two_line_model' must name"):
        recognize(PHOTO, models, RecognitionSettings(max_batch_size=4, two_line_model="lprnet_rows"))


def test_a_plates_other_ways_are_read_only_where_its_first_way_reads_it_under_other_ways_below():
    # Plate 0: one row read well, so its two-row way is never read; plate 1: one row reads no plate, so its rows are.
    models = RowModels([["A123BC77"], ["B123", "AB77"], ["H7"], ["H701", "HE27"]], plate_of=[0, 0, 1, 1])
    settings = RecognitionSettings(max_batch_size=32, two_line_model="lprnet_rows", other_ways_below=0.3)
    plates = recognize(PHOTO, models, settings)
    assert plates.texts == ["A123BC77", "H701HE27"] and plates.boxes[:, 0].tolist() == [0, 3]
    assert models.by_model["lprnet_rows"] == ["H701", "HE27"] * 2


def test_every_way_of_every_plate_is_read_in_one_call_where_other_ways_below_is_1():
    # Plate 0 read two ways, as yolo's level_below gives a tilted plate (upright A123BC77, levelled X1, no plate):
    # both go to the reader in one batch with plate 1's one way, so a tilted plate costs no second round of calls,
    # and the likelier stands.
    models = RowModels([["A123BC77"], ["X1"], ["B123AB77"]], plate_of=[0, 0, 1])
    calls = []

    def counted(model, inputs, outputs):
        calls.append(model)
        return models(model, inputs, outputs)

    plates = recognize(PHOTO, counted, RecognitionSettings(max_batch_size=32, other_ways_below=1.0))
    assert plates.texts == ["A123BC77", "B123AB77"]
    assert calls == ["yolo", "stn", "lprnet"]
    assert models.by_model["lprnet"] == ["A123BC77", "A123BC77", "X1", "X1", "B123AB77", "B123AB77"]


class DarkPlateModels(RowModels):
    """lprnet reads a row whose crop was negated (its light and dark swapped) as `dark_texts[n]`. Each crop's core
    holds characters, a third of it: light on a dark plate, but dark on a light one for the plates in `light_plates`."""

    def __init__(self, plates: list[list[str]], dark: list[list[str]], light_plates: Sequence[int] = ()):
        super().__init__(plates)
        self.dark_texts = [""] + [text for rows in dark for _ in range(2) for text in rows]
        for plate, rows in enumerate(plates):
            background = 1.0 if plate in light_plates else -1.0
            core = self.crops[2 * plate : 2 * plate + 2, :, 6:18, : 94 * len(rows)]
            core[:] = background
            core[..., ::3] = -background

    def __call__(self, model, inputs, outputs):
        batch = inputs["input__0"]
        if model != "yolo" and model != "stn" and float(batch[:, 0, 0, 0].min()) < 0:
            texts = [self.dark_texts[-int(n)] for n in batch[:, 0, 0, 0]]
            self.by_model.setdefault(f"{model} negated", []).extend(texts)
            return {"output__0": torch.stack([logits_reading(text) for text in texts])}
        return super().__call__(model, inputs, outputs)


def test_a_plate_that_reads_poorly_is_read_again_with_light_and_dark_swapped_and_the_likelier_reading_stands():
    # Plate 0 reads well as it is: never negated. Plate 1 (white on black) reads no plate as it is, and its rows
    # negated read 7414 / CK60. Plate 2 reads no plate either way: it stays unread.
    models = DarkPlateModels([["A123BC77"], ["7", "C"], ["B8"]], dark=[["X"], ["7414", "CK60"], ["B9"]])
    settings = RecognitionSettings(max_batch_size=32, two_line_model="lprnet_rows", inverted_below=0.3)
    plates = recognize(PHOTO, models, settings)
    assert plates.texts == ["A123BC77", "7414CK60", ""]
    assert models.by_model["lprnet_rows negated"] == ["7414", "CK60"] * 2
    assert models.by_model["lprnet negated"] == ["B9"] * 2  # plate 0 was not read again


def test_a_plate_of_dark_characters_that_reads_poorly_is_not_read_negated():
    # Plate 1 reads no plate as it is, but its characters are dark: negated, it would read B123AB77, and is not read.
    models = DarkPlateModels([["7", "C"], ["B8"]], dark=[["7414", "CK60"], ["B123AB77"]], light_plates=[1])
    settings = RecognitionSettings(max_batch_size=32, two_line_model="lprnet_rows", inverted_below=0.3)
    plates = recognize(PHOTO, models, settings)
    assert plates.texts == ["7414CK60", ""]
    assert "lprnet negated" not in models.by_model
    # inverted_light_below 1: every way reading poorly is read negated, its characters light or dark.
    models = DarkPlateModels([["7", "C"], ["B8"]], dark=[["7414", "CK60"], ["B123AB77"]], light_plates=[1])
    plates = recognize(PHOTO, models, dataclasses.replace(settings, inverted_light_below=1.0))
    assert plates.texts == ["7414CK60", "B123AB77"]


def test_no_plate_is_read_negated_where_inverted_below_is_0():
    models = DarkPlateModels([["7", "C"]], dark=[["7414", "CK60"]])
    plates = recognize(PHOTO, models, RecognitionSettings(max_batch_size=32, two_line_model="lprnet_rows"))
    assert plates.texts == [""] and not any("negated" in model for model in models.by_model)


class DoubtfulRowModels(RowModels):
    """lprnet reads a row whose text ends in "?" as that text, barely."""

    def __call__(self, model, inputs, outputs):
        if model != "lprnet":
            return super().__call__(model, inputs, outputs)
        texts = [self.row_texts[int(n)] for n in inputs["input__0"][:, 0, 0, 0]]
        self.by_model.setdefault(model, []).extend(texts)
        return {"output__0": torch.stack([logits_reading(t.rstrip("?"), 2.0 if "?" in t else 5.0) for t in texts])}


def test_a_plate_settled_by_one_ways_first_look_reads_no_more_cuts_of_its_other_ways():
    # Plate 0 upright reads A123BC77 from its first cut; levelled, its first cut reads A123BC78 barely, unsettled: its
    # second cut is not read, since the plate is settled. Plate 1's only way reads B123AB77 barely: both its cuts are.
    models = DoubtfulRowModels([["A123BC77"], ["A123BC78?"], ["B123AB77?"]], plate_of=[0, 0, 1])
    settings = RecognitionSettings(max_batch_size=32, first_look=FirstLook((0,), 0.3), other_ways_below=1.0)
    plates = recognize(PHOTO, models, settings)
    assert plates.texts[0] == "A123BC77"
    assert models.by_model["lprnet"] == ["A123BC77", "A123BC78?", "B123AB77?", "B123AB77?"]


def test_the_first_looks_of_a_plates_other_ways_share_the_first_round_and_count_only_where_it_reads_poorly():
    # Plate 0 upright reads B123AB77 barely from both its cuts, so its levelled way is read; its first cut was read
    # with the first ways' first looks, and settles the plate: two rounds of calls, not three. Plate 1 has one way.
    models = DoubtfulRowModels([["B123AB77?"], ["A123BC77"], ["X777AM77"]], plate_of=[0, 0, 1])
    calls = []

    def counted(model, inputs, outputs):
        calls.append(model)
        return models(model, inputs, outputs)

    settings = RecognitionSettings(max_batch_size=32, first_look=FirstLook((0,), 0.3), other_ways_below=0.8)
    plates = recognize(PHOTO, counted, settings)
    assert plates.texts == ["A123BC77", "X777AM77"]
    assert models.by_model["lprnet"] == ["B123AB77?", "A123BC77", "X777AM77", "B123AB77?"]
    assert calls == ["yolo", "stn", "lprnet", "stn", "lprnet"]


def test_a_plate_read_well_one_way_is_not_read_negated_its_other_way():
    models = DarkPlateModels([["A123BC77"], ["X1"], ["B8"]], dark=[["A1"], ["X2"], ["B123AB77"]])
    models.plate_of = [0, 0, 1]
    settings = RecognitionSettings(max_batch_size=32, inverted_below=0.3, other_ways_below=1.0)
    plates = recognize(PHOTO, models, settings)
    assert plates.texts == ["A123BC77", "B123AB77"]
    assert models.by_model["lprnet negated"] == ["B123AB77"] * 2  # plate 1 alone, both its cuts
