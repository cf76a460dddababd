"""The orchestration behind `plate_recognition`: detector, then STN and LPRNet on the crops, then decoding.

Tensors are torch tensors on whatever device the models put them; the adapter moves them between Triton and torch
through DLPack, so on a GPU they never visit the host until the final, small outputs are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from plates.exceptions import ModelConfigError, SubModelError
from plates.inference.model_config import ModelConfig, nonnegative_int_list, positive_int, unit_float
from plates.inference.photo_input import FILE, Photo
from plates.photos.decoding import read_header
from plates.recognition.ctc import Reading, vote
from plates.recognition.layouts import likeliest
from plates.recognition.polarity import LIGHT_CHARACTERS_BELOW, light_share
from plates.recognition.rows import join_rows, read_joined, split_rows

# infer(model_name, inputs by name, output names) -> outputs by name; inputs are tensors, or a BYTES array (a file)
Infer = Callable[[str, Mapping[str, "torch.Tensor | np.ndarray"], list[str]], dict[str, torch.Tensor]]

# What the orchestrator asks of yolo, for each way to read a plate: crops, box, score, rows, and the plate it reads.
DETECTOR_OUTPUTS = ("output__0", "output__1", "output__2", "output__3", "output__4")


@dataclass(frozen=True)
class Plates:
    boxes: np.ndarray  # [N, 4] float32
    texts: list[str]  # "" where the plate could not be read as a valid plate
    scores: np.ndarray  # [N] float32, detector confidence
    text_scores: np.ndarray  # [N] float32, probability of the text under the recognizer, 0 where unread
    candidates: np.ndarray  # [N, K] str (object), the likeliest texts, also where `texts` is ""; "" as padding
    candidate_scores: np.ndarray  # [N, K] float32, their probabilities; 0 as padding

    @classmethod
    def empty(cls, candidates: int) -> Plates:
        nothing = np.zeros((0,), np.float32)
        texts, scores = pad_candidates([], candidates)
        return cls(np.zeros((0, 4), np.float32), [], nothing, nothing, texts, scores)


@dataclass(frozen=True)
class FirstLook:
    """Read these of each plate's cuts first (indices into its cuts, in the order yolo cuts them), and its other cuts
    only where they do not settle the plate: where they read different texts, or their vote scores below
    `min_score`. A plate they settle gets their vote, the text the vote over all its cuts would give. A plate in
    which none of them finds any plate text is given up: text "" and no candidates, as the vote over all its cuts
    would blank it."""

    cuts: tuple[int, ...]
    min_score: float

    def settles(self, readings: Sequence[Reading], voted: Reading) -> bool:
        return len({r.text for r in readings}) == 1 and voted.text != "" and voted.confidence >= self.min_score

    def gives_up(self, readings: Sequence[Reading]) -> bool:
        return not any(r.candidates for r in readings)

    def decides(self, readings: Sequence[Reading], voted: Reading) -> bool:
        """Whether the first look is the plate's reading: it settles the plate or gives it up."""
        return self.settles(readings, voted) or self.gives_up(readings)


@dataclass(frozen=True)
class RecognitionSettings:
    max_batch_size: int = 32  # the most crops one stn or lprnet request holds (their max_batch_size)
    candidates: int = 1  # texts listed per plate
    min_text_score: float = 0.0  # a text scoring less is blanked; its candidates stay
    first_look: FirstLook | None = None  # None: every cut of every plate is read
    two_line_model: str = ""  # the model that reads two-line plates' rows; "": stn and lprnet, as one-line plates
    other_ways_below: float = 1.0  # a plate's other ways are read unless its first way reads at least this
    inverted_below: float = 0.0  # a way reading under this is read again with light and dark swapped (0: never)
    # ... where the light side of its first cut's core is under this share (plates.recognition.polarity; 1: any).
    inverted_light_below: float = LIGHT_CHARACTERS_BELOW
    min_unread_score: float = 0.0  # a plate left unread is answered only where the detector scored it at least this

    @classmethod
    def from_config(cls, config: ModelConfig) -> RecognitionSettings:
        """plate_recognition's parameters; an empty `first_look_cuts` reads every cut."""
        cuts = config.parameter("first_look_cuts", nonnegative_int_list, default=[])
        return cls(
            max_batch_size=config.parameter("recognizer_max_batch_size", positive_int),
            candidates=config.parameter("candidates", positive_int),
            min_text_score=config.parameter("min_text_score", unit_float),
            first_look=FirstLook(tuple(cuts), config.parameter("first_look_min_score", unit_float)) if cuts else None,
            two_line_model=config.parameter("two_line_model", str, default=""),
            other_ways_below=config.parameter("other_ways_below", unit_float, default=1.0),
            inverted_below=config.parameter("inverted_below", unit_float, default=0.0),
            inverted_light_below=config.parameter("inverted_light_below", unit_float, default=LIGHT_CHARACTERS_BELOW),
            min_unread_score=config.parameter("min_unread_score", unit_float, default=0.0),
        )


def pad_candidates(readings: Sequence[Reading], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` likeliest texts of each reading and their probabilities, as [N, k] arrays padded with "" and 0:
    a fixed width keeps the outputs rectangular tensors."""
    texts = np.full((len(readings), k), "", dtype=np.object_)
    scores = np.zeros((len(readings), k), np.float32)
    for row, reading in enumerate(readings):
        for column, (text, score) in enumerate(reading.candidates[:k]):
            texts[row, column], scores[row, column] = text, score
    return texts, scores


def in_batches(infer: Infer, model: str, batch: torch.Tensor, max_batch_size: int) -> torch.Tensor:
    """Run `model` over `batch` in chunks its max_batch_size accepts, and join the outputs."""
    outputs = [
        infer(model, {"input__0": chunk}, ["output__0"])["output__0"] for chunk in torch.split(batch, max_batch_size)
    ]
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs)


def row_logits(infer: Infer, rows: torch.Tensor, two_line: np.ndarray, settings: RecognitionSettings) -> torch.Tensor:
    """The recognizer's logits of each 94x24 row of `rows`: through stn and lprnet, but where `two_line` marks a row
    of a two-line plate, through `settings.two_line_model` where it names one."""

    def one_line(batch: torch.Tensor) -> torch.Tensor:
        return in_batches(
            infer, "lprnet", in_batches(infer, "stn", batch, settings.max_batch_size), settings.max_batch_size
        )

    if not settings.two_line_model or not two_line.any():
        return one_line(rows)
    theirs = torch.from_numpy(np.flatnonzero(two_line)).to(rows.device)
    two = in_batches(infer, settings.two_line_model, rows[theirs], settings.max_batch_size)
    if two_line.all():
        return two
    ours = torch.from_numpy(np.flatnonzero(~two_line)).to(rows.device)
    one = one_line(rows[ours])
    if one.shape[1:] != two.shape[1:]:
        raise ModelConfigError(
            f"model 'plate_recognition': lprnet gives logits of shape {list(one.shape[1:])} and "
            f"'{settings.two_line_model}' {list(two.shape[1:])}: parameter 'two_line_model' must name a recognizer "
            "of lprnet's classes and frames"
        )
    logits = one.new_empty((len(two_line), *one.shape[1:]))
    logits[ours], logits[theirs] = one, two
    return logits


class CutReader:
    """The readings of a photo's cuts (yolo's crops: each way's cuts one after the other, a two-line plate's rows
    apart in each), each cut read once: a round of calls to the reader reads every cut asked for that is not read
    yet, so that cuts wanted by several steps of the reading (a first way's, its plate's other ways') can share a
    round. `inverted`: the cuts are read with their light and dark swapped (crops are scaled to [-1, 1], so negating
    one swaps them; zero past a crop's rows stays zero)."""

    def __init__(
        self, infer: Infer, crops: torch.Tensor, rows: np.ndarray, settings: RecognitionSettings, inverted: bool = False
    ) -> None:
        self.infer, self.crops, self.settings, self.inverted = infer, crops, settings, inverted
        self.per_way = crops.shape[0] // len(rows)
        self.rows_of_cut = np.repeat(rows, self.per_way)
        self.readings: dict[int, Reading] = {}

    def cuts_of(self, ways: Sequence[int], cuts: Sequence[int] | None = None) -> list[int]:
        """The indices of cuts `cuts` (None: all) of each of `ways`, way by way."""
        cuts = range(self.per_way) if cuts is None else cuts
        return [way * self.per_way + cut for way in ways for cut in cuts]

    def read(self, cuts: Sequence[int]) -> list[Reading]:
        """The readings of `cuts`, reading those not read yet in one round."""
        missing = [cut for cut in dict.fromkeys(cuts) if cut not in self.readings]
        if missing:
            if missing == list(range(self.crops.shape[0])):  # every cut, as most photos have: yolo's crops as they are
                chosen = self.crops
            else:
                chosen = self.crops[torch.tensor(missing, device=self.crops.device)]
            rows = self.rows_of_cut[missing]
            logits = row_logits(
                self.infer,
                split_rows(-chosen if self.inverted else chosen, rows),
                np.repeat(rows, rows) == 2,
                self.settings,
            )
            logits, frames = join_rows(logits, rows)
            self.readings.update(zip(missing, read_joined(logits.cpu().numpy(), frames.cpu().numpy(), rows)))
        return [self.readings[cut] for cut in cuts]


def read_cuts(
    reader: CutReader, ways: Sequence[int], settings: RecognitionSettings, plate_of: np.ndarray | None = None
) -> list[Reading]:
    """One reading per way of `ways` from its cuts: the vote of all its cuts, or of its first look where that decides
    it, or where the first look of another of `ways` of its plate (`plate_of`: each of `ways`' plate; None: one way
    a plate) does."""
    per_way = reader.per_way
    look = settings.first_look
    if look is None:
        return vote(reader.read(reader.cuts_of(ways)), per_way)
    if max(look.cuts) >= per_way:
        raise ModelConfigError(
            f"model 'plate_recognition': parameter 'first_look_cuts' names cut {max(look.cuts)}, but yolo cuts "
            f"each plate {per_way} ways (cuts 0 to {per_way - 1})"
        )
    reader.read(reader.cuts_of(ways, look.cuts))
    firsts = [reader.read(reader.cuts_of([way], look.cuts)) for way in ways]
    looks = [vote(readings, len(readings))[0] for readings in firsts]
    undecided = [n for n in range(len(ways)) if not look.decides(firsts[n], looks[n])]
    if plate_of is not None:
        # A plate read well one way (upright, say) needs no more cuts of its other ways (levelled): the likelier
        # reading stands, and their rest would cost another call to the reader for the photo.
        settled = {int(plate_of[n]) for n in range(len(ways)) if look.settles(firsts[n], looks[n])}
        undecided = [n for n in undecided if int(plate_of[n]) not in settled]
    # Every cut in yolo's order, as when all are read: the same sums, so the same texts and scores.
    reader.read(reader.cuts_of([ways[n] for n in undecided]))
    for n in undecided:
        looks[n] = vote(reader.read(reader.cuts_of([ways[n]])), per_way)[0]
    return looks


def read_ways(
    infer: Infer, crops: torch.Tensor, rows: np.ndarray, plate_of: np.ndarray, settings: RecognitionSettings
) -> tuple[list[int], list[Reading]]:
    """Each plate's reading, and the way it was read (an index into yolo's ways, plates.recognition.layouts): its
    first way; and its other ways where the first reads under `settings.other_ways_below` (all at once where that is
    1), then the likeliest; a way needs no more cuts read where another way's first look settles its plate. A way
    of a plate that no way reads at `settings.inverted_below` or more, whose first cut's characters are light
    (`settings.inverted_light_below`), is read again with its light and dark swapped, and that reading stands where it
    reads at least as much, and more than the first: white characters on a blue (police), black (military) or red
    (diplomatic) plate then read as the dark ones of the white plates the recognizers learnt most from."""
    reader = CutReader(infer, crops, rows, settings)
    first = np.flatnonzero(np.diff(plate_of, prepend=-1) > 0).tolist()
    if settings.other_ways_below >= 1:
        # No reading clears 1, so every way is read: in one call with the first ways, not in a second after them.
        first = list(range(len(rows)))
    elif settings.first_look is not None and len(first) < len(rows):
        # The first looks of the other ways go with the first ways' first round: where a first way reads under
        # other_ways_below, its other ways' reading then starts from cuts already read, not from another round of
        # calls (a round costs the served reader a few ms more than its cuts). Each cut is read alike in any batch,
        # so the readings are those of reading the ways one after the other.
        reader.read(reader.cuts_of(range(len(rows)), settings.first_look.cuts))
    readings = dict(zip(first, read_cuts(reader, first, settings, plate_of[first])))
    doubtful = {int(plate_of[way]) for way in first if readings[way].confidence < settings.other_ways_below}
    others = [way for way in range(len(rows)) if way not in readings and int(plate_of[way]) in doubtful]
    if others:
        readings.update(zip(others, read_cuts(reader, others, settings, plate_of[others])))
    # Only the ways of a plate no way reads well: one read well upright is not read again negated where its
    # levelled way reads poorly.
    read_well = {
        int(plate_of[way]) for way, reading in readings.items() if reading.confidence >= settings.inverted_below
    }
    dark = [
        way
        for way in sorted(readings)
        if readings[way].confidence < settings.inverted_below and int(plate_of[way]) not in read_well
    ]
    if dark and settings.inverted_light_below < 1:
        # Dark characters a way could not read are no better negated: on the real dev photos that reading had cost
        # a round of the reader on one photo in ten, and never stood.
        firsts = crops[torch.tensor(reader.cuts_of(dark, [0]), device=crops.device)]
        light = (light_share(firsts, rows[dark].tolist()) < settings.inverted_light_below).tolist()
        dark = [way for way, is_light in zip(dark, light) if is_light]
    if dark:
        negated = CutReader(infer, crops, rows, settings, inverted=True)
        for way, reading in zip(dark, read_cuts(negated, dark, settings, plate_of[dark])):
            # The swapped reading stands only where it clears the bar itself: where neither reads the plate well,
            # the first, doubtful reading stays rather than another as doubtful.
            if reading.confidence >= settings.inverted_below and reading.confidence > readings[way].confidence:
                readings[way] = reading
    ways = sorted(readings)
    chosen = [ways[index] for index in likeliest([readings[way] for way in ways], plate_of[ways])]
    return chosen, [readings[way] for way in chosen]


def recognize(photo: Photo, infer: Infer, settings: RecognitionSettings) -> Plates:
    """Every plate of `photo` (as plates.inference.photo_input.photo_input gives it): its box and score, its text
    where text_score >= `settings.min_text_score` ("" and 0 otherwise), and its `settings.candidates` likeliest texts
    whatever their score; but not a plate left unread ("") that the detector scored under
    `settings.min_unread_score`."""
    if FILE in photo:
        # Read here too, not only where yolo decodes it: Triton 2.51 reports every error of a BLS sub-request as
        # INTERNAL, and a file that is no photo is the client's fault (INVALID_ARG).
        read_header(photo[FILE][0], FILE)
    try:
        detected = infer("yolo", photo, list(DETECTOR_OUTPUTS))
    except SubModelError as error:
        # A file whose header reads can still fail to decode, in yolo: the client's fault too.
        fault = error.input_fault(FILE) if FILE in photo else None
        if fault is None:
            raise
        raise fault from error
    crops, boxes = detected["output__0"], detected["output__1"]
    if boxes.shape[0] == 0:
        return Plates.empty(settings.candidates)
    rows, plate_of = (detected[name].cpu().numpy() for name in ("output__3", "output__4"))
    chosen, readings = read_ways(infer, crops, rows, plate_of, settings)
    scores = detected["output__2"].cpu().numpy().astype(np.float32)[chosen]
    kept = [bool(r.text) and r.confidence >= settings.min_text_score for r in readings]
    answered = [i for i, keep in enumerate(kept) if keep or scores[i] >= settings.min_unread_score]
    readings, kept = [readings[i] for i in answered], [kept[i] for i in answered]
    candidate_texts, candidate_scores = pad_candidates(readings, settings.candidates)
    return Plates(
        boxes=boxes.cpu().numpy().astype(np.float32)[chosen][answered],
        texts=[r.text if keep else "" for r, keep in zip(readings, kept)],
        scores=scores[answered],
        text_scores=np.array([r.confidence if keep else 0.0 for r, keep in zip(readings, kept)], np.float32),
        candidates=candidate_texts,
        candidate_scores=candidate_scores,
    )
