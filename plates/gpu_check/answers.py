"""What a server answers for a set of photos, and how two such answers differ: the GPU's against the CPU's.

An answer is what PlatesClient gives for a photo's file, plate by plate (text, box, scores), kept as JSON by the
photo's path. Two answers are compared plate by plate, the plates matched by their boxes (IoU >= 0.5, as `plates
eval` matches them): the same plates, the same texts, and how far boxes and scores moved. PyTorch's kernels on a GPU
add in another order than on a CPU, and Ultralytics' convolutions run in TF32 there, so boxes and scores move a
little; a text that changes, or a plate found on one side only, is a difference that counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from plates.client.service import PlatesClient
from plates.evaluation.scoring import match

Answers = dict[str, list[dict]]  # photo -> its plates, each {"text", "box", "score", "text_score"}


def read_answers(url: str, data: Path, photos: Iterable[str], timeout: float = 60.0) -> Answers:
    """Each photo (a path relative to `data`) sent as its file, as plates-client sends it, and its plates."""
    answers = {}
    with PlatesClient(url, timeout=timeout) as client:
        for photo in photos:
            plates = client.recognize((data / photo).read_bytes())
            answers[photo] = [
                {"text": p.text, "box": p.box, "score": p.score, "text_score": p.text_score} for p in plates
            ]
    return answers


@dataclass
class Comparison:
    photos: int = 0
    plates: int = 0  # in the reference
    matched: int = 0  # found on both sides, boxes at IoU >= 0.5
    same_text: int = 0  # of the matched
    max_box_px: float = 0.0  # the largest move of a box's side, of the matched
    max_score: float = 0.0  # the largest change of a detector score
    max_text_score: float = 0.0  # and of a text score
    differences: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        return (
            f"{self.photos} photos, {self.plates} plates: {self.matched} found on both sides, {self.same_text} read "
            f"the same; boxes moved {self.max_box_px:.2f} px at most, detector scores {self.max_score:.4f}, text "
            f"scores {self.max_text_score:.4f}; {len(self.differences)} differences"
        )


def compare(reference: Answers, other: Answers) -> Comparison:
    """`other`'s answers against `reference`'s, photo by photo; a photo on one side only is a difference."""
    result = Comparison()
    for photo in sorted(reference.keys() | other.keys()):
        if photo not in reference or photo not in other:
            result.differences.append(f"{photo}: answered on one side only")
            continue
        ours, theirs = reference[photo], other[photo]
        result.photos += 1
        result.plates += len(ours)
        pairs = match([p["box"] for p in ours], [p["box"] for p in theirs])
        for i, j, _ in pairs:
            a, b = ours[i], theirs[j]
            result.matched += 1
            result.max_box_px = max(result.max_box_px, *(abs(x - y) for x, y in zip(a["box"], b["box"])))
            result.max_score = max(result.max_score, abs(a["score"] - b["score"]))
            result.max_text_score = max(result.max_text_score, abs(a["text_score"] - b["text_score"]))
            if a["text"] == b["text"]:
                result.same_text += 1
            else:
                result.differences.append(
                    f"{photo}: the plate at {a['box']} reads {a['text']} ({a['text_score']}) and {b['text']} "
                    f"({b['text_score']})"
                )
        for i in sorted(set(range(len(ours))) - {i for i, _, _ in pairs}):
            result.differences.append(f"{photo}: {ours[i]['text']} at {ours[i]['box']} found on the first side only")
        for j in sorted(set(range(len(theirs))) - {j for _, j, _ in pairs}):
            result.differences.append(
                f"{photo}: {theirs[j]['text']} at {theirs[j]['box']} found on the second side only"
            )
    return result
