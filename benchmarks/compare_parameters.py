"""What a change of config parameters costs a photo: the pipeline in one process (the served code, without Triton's
transport: plates.inference.in_process) on the committed model repository and on a copy with the given parameters
changed, one photo after the other in turns (the order swapped each round), then p50 and p90 over every photo of the
manifests, and over a 1920x1080 frame with no plate (cat.jpeg, enlarged) sent 10 times a round.

    poetry run python benchmarks/compare_parameters.py ../shared/data/e2e.json \
        --set yolo:second_look_imgsz=0 plate_recognition:min_unread_score=0 [--rounds 3]

A parameter that a config does not hold already is an error: this compares values, it does not add settings.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from plates.build.paths import DEFAULT_REPOSITORY, shared_dir
from plates.build.repository import set_parameter
from plates.evaluation.manifests import load_manifest
from plates.inference.in_process import InProcessPipeline
from plates.server.candidates import copy_repository

CAT = shared_dir() / "data" / "samples" / "cat.jpeg"
FRAMES_PER_ROUND = 10


def changed_repository(target: Path, changes: list[str]) -> Path:
    """The model repository copied to `target`, each "model:key=value" of `changes` set in its model's config."""
    copy_repository(target)
    for change in changes:
        model, _, assignment = change.partition(":")
        key, _, value = assignment.partition("=")
        set_parameter(target / model / "config.pbtxt", key, value)
    return target


def percentiles(seconds: list[float]) -> tuple[float, float]:
    return float(np.median(seconds)) * 1000, float(np.percentile(seconds, 90)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+", help="manifests or YOLO folders whose photos are timed")
    parser.add_argument("--set", nargs="+", required=True, metavar="MODEL:KEY=VALUE", help="the parameters changed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-plate", type=Path, default=CAT, help="the photo enlarged to the no-plate frame")
    args = parser.parse_args()

    files = list(dict.fromkeys(Path(photo.image) for path in args.manifests for photo in load_manifest(path)))
    photos = [file.read_bytes() for file in files]
    frame = cv2.imencode(".jpg", cv2.resize(cv2.imread(str(args.no_plate)), (1920, 1080)))[1].tobytes()
    with tempfile.TemporaryDirectory() as folder:
        pipelines = {
            "committed": InProcessPipeline(DEFAULT_REPOSITORY),
            "changed": InProcessPipeline(changed_repository(Path(folder) / "model_repository", args.set)),
        }
        times: dict[tuple[str, bool], list[float]] = {(name, f): [] for name in pipelines for f in (False, True)}
        for round_ in range(args.rounds):
            order = list(pipelines) if round_ % 2 == 0 else list(reversed(pipelines))
            for data in photos + [frame] * FRAMES_PER_ROUND:
                for name in order:
                    started = time.perf_counter()
                    pipelines[name].recognize(data)
                    times[name, data is frame].append(time.perf_counter() - started)
    print(f"{len(photos)} photos and a no-plate frame, {args.rounds} rounds; changed: {' '.join(args.set)}")
    for frames, what in ((False, "photos"), (True, "no-plate 1920x1080 frame")):
        (p50, p90), (q50, q90) = (percentiles(times[name, frames]) for name in pipelines)
        print(f"  {what}: committed p50 {p50:.1f} ms, p90 {p90:.1f} ms; changed {q50 / p50:.3f}, {q90 / p90:.3f} of it")


if __name__ == "__main__":
    main()
