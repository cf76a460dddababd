"""Recognizers against each other, in one run, end to end through the served pipeline.

    poetry run python benchmarks/compare_recognizers.py MANIFEST ... [--recognizers pretrained plates NAME=CHECKPOINT]
    poetry run python benchmarks/compare_recognizers.py ../shared/data/e2e.json ../shared/data/val_texts.json

A recognizer is one of the weight sets the build knows (plates.build.repository.RECOGNIZERS), or NAME=CHECKPOINT, a
checkpoint of convert/train_recognizer.py (a candidate not yet in weights/). For each: a model repository of its own
(model_repository/'s configs and detector, its STN and LPRNet traced into it), a Triton server on free ports, and then,
on each manifest's photos:
- what `plates eval` reports: end to end, reading of found plates, and the phantom texts (texts read on boxes that
  match no labelled plate; e2e.json labels one plate a photo, so real plates beside it count here too);
- the crops lprnet reads per plate, from Triton's statistics photo by photo: each plate costs the first look's cuts,
  and each plate the first look does not settle costs the rest of its cuts;
- where reading fails (plates.evaluation.misreads): main field against region code, and the characters confused;
and on the first manifest's photos:
- per-stage milliseconds in one process, as `plates bench --in-process` measures them (mean over the photos);
- p50 and p90 of the served latency over the photos, one at a time (`--rounds` passes after a warm-up pass).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from plates.build.repository import RECOGNIZERS, build_model_repository, write_recognizer
from plates.client.service import PlatesClient
from plates.evaluation.manifests import load_manifest
from plates.evaluation.report import format_summary
from plates.evaluation.scoring import evaluate
from plates.evaluation.timing import model_statistics
from plates.inference.in_process import STAGES, InProcessPipeline
from plates.inference.model_config import float_list, nonnegative_int_list, read_config
from plates.server.candidates import copy_repository, serving
from plates.training.trainer import load_checkpoint


def lprnet_items(url: str) -> int:
    return sum(int(v.get("inference_count", 0)) for v in model_statistics(url, "lprnet")["model_stats"])


def cuts_per_plate(repository: Path) -> tuple[int, int]:
    """(cuts the first look reads, cuts yolo makes) per plate, from the configs."""
    first = len(
        read_config(repository / "plate_recognition" / "config.pbtxt").parameter(
            "first_look_cuts", nonnegative_int_list, default=[]
        )
    )
    yolo = read_config(repository / "yolo" / "config.pbtxt")
    every = len(yolo.parameter("crop_vertical_pads", float_list)) * len(
        yolo.parameter("crop_horizontal_margins", float_list)
    )
    return (first or every), every


def build(name: str, repository: Path) -> None:
    """The repository for recognizer `name`: a weight set of RECOGNIZERS, or NAME=CHECKPOINT."""
    copy_repository(repository, leave_out=["*.pt", "*.onnx"])
    label, _, checkpoint = name.partition("=")
    build_model_repository(repository, recognizer=label if not checkpoint else "plates")
    if checkpoint:
        write_recognizer(repository, *load_checkpoint(Path(checkpoint)), label)


def evaluate_manifest(client: PlatesClient, url: str, manifest: str, first: int, every: int) -> dict:
    photos = load_manifest(manifest)
    predictions, crops, second_looks, plates = [], 0, 0, 0
    for photo in photos:
        before = lprnet_items(url)
        found = client.recognize(photo.image.read_bytes())
        read = lprnet_items(url) - before
        predictions.append(found)
        plates += len(found)
        # Every plate costs the first look; each it does not settle costs the rest of its cuts.
        second_looks += (read - first * len(found)) // max(every - first, 1) if every > first else 0
        crops += read
    report = evaluate(photos, predictions)
    return {
        "summary": format_summary(report),
        "end_to_end": report.end_to_end,
        "reading": report.recognition,
        "phantoms": report.unmatched_texts,
        "misreads": report.misreads,
        "plates": plates,
        "crops": crops,
        "first_look_only": (plates - second_looks) / max(plates, 1),
    }


def measure(name: str, manifests: list[str], rounds: int, workdir: Path) -> dict:
    repository = workdir / name.partition("=")[0]
    build(name, repository)
    first, every = cuts_per_plate(repository)
    files = [photo.image.read_bytes() for photo in load_manifest(manifests[0])]
    with serving(repository, workdir / f"{repository.name}.log") as server, PlatesClient(server.url) as client:
        results = {manifest: evaluate_manifest(client, server.url, manifest, first, every) for manifest in manifests}
        latencies = []
        for _ in range(rounds):
            for data in files:
                start = time.perf_counter()
                client.recognize(data)
                latencies.append((time.perf_counter() - start) * 1000)
    pipeline = InProcessPipeline(repository)
    stages = {stage: [] for stage in STAGES}
    for data in files:
        pipeline.recognize(data)  # warm: TorchScript's first run of a shape
        for stage, seconds in pipeline.recognize(data)[1].items():
            stages[stage].append(seconds * 1000)
    return {
        "manifests": results,
        "stages": {stage: float(np.mean(values)) for stage, values in stages.items()},
        "p50": float(np.percentile(latencies, 50)),
        "p90": float(np.percentile(latencies, 90)),
    }


def recognizer(text: str) -> str:
    label, _, checkpoint = text.partition("=")
    if (checkpoint and not Path(checkpoint).is_file()) or (not checkpoint and label not in RECOGNIZERS):
        raise argparse.ArgumentTypeError(f"{text!r}: one of {', '.join(RECOGNIZERS)}, or NAME=CHECKPOINT (a file)")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifests", nargs="+", help="plates eval manifests; latency and stages on the first's photos")
    parser.add_argument("--recognizers", nargs="+", type=recognizer, default=["pretrained", "plates"])
    parser.add_argument("--rounds", type=int, default=2, help="latency passes over the first manifest's photos")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="plates-recognizers-") as workdir:
        results = {name: measure(name, args.manifests, args.rounds, Path(workdir)) for name in args.recognizers}
    for name, r in results.items():
        stages = r["stages"]
        recognizer_ms = stages["stn"] + stages["lprnet"] + stages["reading"]
        print(f"\n== {name}")
        for manifest, m in r["manifests"].items():
            e2e, reading = m["end_to_end"], m["reading"]
            print(f"-- {manifest}\n{m['summary']}")
            print(
                f"end to end {e2e.value:.3f} ({e2e.hits}/{e2e.total}), reading of found plates "
                f"{reading.value:.3f} ({reading.hits}/{reading.total})"
            )
            print("\n".join(m["misreads"].format()))
            print(f"misread: {', '.join(f'{a} read {b or chr(34) * 2}' for a, b in m['misreads'].examples) or 'none'}")
            print(f"phantom texts ({len(m['phantoms'])}): {', '.join(m['phantoms']) or 'none'}")
            print(
                f"lprnet read {m['crops']} crops for {m['plates']} plates ({m['crops'] / max(m['plates'], 1):.2f} a "
                f"plate); {m['first_look_only']:.1%} of plates read from the first look alone"
            )
        print(
            "in process, ms: "
            + ", ".join(f"{s} {v:.1f}" for s, v in stages.items())
            + f"; stn + lprnet + reading {recognizer_ms:.1f} = {recognizer_ms / stages['detector']:.2f} x the detector"
        )
        print(f"served latency over the first manifest's photos: p50 {r['p50']:.1f} ms, p90 {r['p90']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
