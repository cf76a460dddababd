"""Choose plate_recognition's first look: which of each plate's cuts to read first, and the score that settles it.

Reads every cut of every detected plate once, in one process (plates.serving.in_process: the model repository's
models and settings), on the photos given, then tries every set of up to --size cuts with each minimum score: a
choice keeps the service's texts exactly (every plate's text after min_text_score equals the vote over all its
cuts) or it is out. Prints, best first, the choices that keep them, with the cuts they read per plate.

    poetry run python benchmarks/choose_first_look.py ../shared/data/samples/car.jpg ../shared/data/e2e.json \
        ../shared/data/detect

The photos are the dev sets, so the choice is tuned on them: it keeps their texts by construction.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import torch

from plates.decoding import decode_image
from plates.evaluation import load_manifest
from plates.photos import read_photo
from plates.recognition.ctc import Reading, read_plates, vote
from plates.serving.in_process import InProcessPipeline
from plates.serving.pipeline import FirstLook

MIN_SCORES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def photo_files(paths: list[str]) -> list[Path]:
    files: dict[Path, None] = {}
    for path in paths:
        if Path(path).suffix.lower() in (".jpg", ".jpeg", ".png"):
            files[Path(path).resolve()] = None
        else:
            files.update((photo.image.resolve(), None) for photo in load_manifest(path))
    return list(files)


def every_cut(pipeline: InProcessPipeline, files: list[Path]) -> list[list[Reading]]:
    """Each detected plate's readings, one per cut, in yolo's order."""
    plates = []
    for file in files:
        image = decode_image(read_photo(str(file)), pipeline.device, "image_bytes")
        outputs = pipeline.detector.cut(*pipeline.detector.detect(image))
        if len(outputs["output__1"]) == 0:
            continue
        with torch.inference_mode():
            logits = pipeline.networks["lprnet"](pipeline.networks["stn"](outputs["output__0"]))
        readings = read_plates(logits.numpy())
        per_plate = len(readings) // len(outputs["output__1"])
        plates += [readings[i : i + per_plate] for i in range(0, len(readings), per_plate)]
    return plates


def shown(reading: Reading, min_text_score: float) -> str:
    return reading.text if reading.confidence >= min_text_score else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("photos", nargs="+", help="photo files, JSON manifests or YOLO folders")
    parser.add_argument("--size", type=int, default=3, help="the most cuts a first look reads (default 3)")
    parser.add_argument("--top", type=int, default=10, help="choices printed (default 10)")
    args = parser.parse_args()
    pipeline = InProcessPipeline()
    files = photo_files(args.photos)
    plates = every_cut(pipeline, files)
    per_plate = len(plates[0])
    threshold = pipeline.settings.min_text_score
    today = [shown(vote(cuts, per_plate)[0], threshold) for cuts in plates]
    print(f"{len(files)} photos, {len(plates)} plates, {per_plate} cuts each; min_text_score {threshold}")
    kept = []
    for size in range(1, args.size + 1):
        for cuts in itertools.combinations(range(per_plate), size):
            looks = [vote([p[c] for c in cuts], size)[0] for p in plates]
            for min_score in MIN_SCORES:
                look = FirstLook(cuts, min_score)
                settled = [look.decides([p[c] for c in cuts], looked) for p, looked in zip(plates, looks)]
                if all(shown(looked, threshold) == text for looked, text, s in zip(looks, today, settled) if s):
                    read = sum(size if s else per_plate for s in settled) / len(plates)
                    kept.append((read, cuts, min_score, sum(settled)))
    kept.sort()
    print(f"{len(kept)} choices keep every text; the {args.top} that read fewest cuts:")
    for read, cuts, min_score, settled in kept[: args.top]:
        print(
            f"  cuts {' '.join(map(str, cuts))}, min_score {min_score}: {read:.2f} cuts per plate, "
            f"{settled} of {len(plates)} plates decided by the first look (settled or given up)"
        )


if __name__ == "__main__":
    main()
