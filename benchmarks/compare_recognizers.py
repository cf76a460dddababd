"""The pretrained recognizer against the project's own, in one run, end to end through the served pipeline.

    poetry run python benchmarks/compare_recognizers.py ../shared/data/e2e.json [--recognizers pretrained plates]

For each recognizer: a model repository of its own (model_repository/'s configs, the generated files built with
`--recognizer`), a Triton server on free ports, and then, on the manifest's photos:
- what `plates eval` reports: end to end, reading of found plates, and the phantom texts (texts read on boxes that
  match no labelled plate; e2e.json labels one plate a photo, so real plates beside it count here too);
- the crops lprnet reads per plate, from Triton's statistics photo by photo: each plate costs the first look's cuts,
  and each plate the first look does not settle costs the rest of its cuts;
- per-stage milliseconds in one process, as `plates bench --in-process` measures them (mean over the photos);
- p50 and p90 of the served latency over the photos, one at a time (`--rounds` passes after a warm-up pass).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from plates.benchmark import model_statistics
from plates.client import PlatesClient
from plates.evaluation import evaluate, format_summary, load_manifest
from plates.export import DEFAULT_REPOSITORY, RECOGNIZERS, build_model_repository
from plates.serving.in_process import STAGES, InProcessPipeline
from plates.serving.model_config import float_list, nonnegative_int_list, read_config
from plates.server.launcher import LocalServer, free_port


def lprnet_items(url: str) -> int:
    return sum(int(v.get("inference_count", 0)) for v in model_statistics(url, "lprnet")["model_stats"])


def cuts_per_plate(repository: Path) -> tuple[int, int]:
    """(cuts the first look reads, cuts yolo makes) per plate, from the configs."""
    first = len(read_config(repository / "plate_recognition" / "config.pbtxt").parameter(
        "first_look_cuts", nonnegative_int_list, default=[]))
    yolo = read_config(repository / "yolo" / "config.pbtxt")
    every = len(yolo.parameter("crop_vertical_pads", float_list)) * len(
        yolo.parameter("crop_horizontal_margins", float_list))
    return (first or every), every


def measure(name: str, manifest: str, rounds: int, workdir: Path) -> dict:
    repository = workdir / name
    shutil.copytree(DEFAULT_REPOSITORY, repository, ignore=shutil.ignore_patterns("*.pt", "*.onnx", "__pycache__"))
    build_model_repository(repository, recognizer=name)
    photos = load_manifest(manifest)
    files = [photo.image.read_bytes() for photo in photos]
    first, every = cuts_per_plate(repository)
    server = LocalServer(repository, http_port=free_port(), grpc_port=free_port(), metrics_port=free_port(),
                         log_file=workdir / f"{name}.log")  # fmt: skip
    server.start(timeout=300)
    try:
        predictions, crops, second_looks, plates = [], [], 0, 0
        with PlatesClient(server.url) as client:
            for data in files:
                before = lprnet_items(server.url)
                found = client.recognize(data)
                read = lprnet_items(server.url) - before
                predictions.append(found)
                plates += len(found)
                # Every plate costs the first look; each it does not settle costs the rest of its cuts.
                second_looks += (read - first * len(found)) // max(every - first, 1) if every > first else 0
                crops.append(read)
            latencies = []
            for _ in range(rounds):
                for data in files:
                    start = time.perf_counter()
                    client.recognize(data)
                    latencies.append((time.perf_counter() - start) * 1000)
    finally:
        server.stop()
    report = evaluate(photos, predictions)
    pipeline = InProcessPipeline(repository)
    stages = {stage: [] for stage in STAGES}
    for data in files:
        pipeline.recognize(data)  # warm: TorchScript's first run of a shape
        for stage, seconds in pipeline.recognize(data)[1].items():
            stages[stage].append(seconds * 1000)
    return {
        "summary": format_summary(report),
        "end_to_end": report.end_to_end.value,
        "reading": report.recognition.value,
        "phantoms": report.unmatched_texts,
        "misread": [(m["expected"], m["got"]) for e in report.errors for m in e.misread],
        "plates": plates,
        "crops": sum(crops),
        "first_look_only": (plates - second_looks) / max(plates, 1),
        "stages": {stage: float(np.mean(values)) for stage, values in stages.items()},
        "p50": float(np.percentile(latencies, 50)),
        "p90": float(np.percentile(latencies, 90)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifest")
    parser.add_argument("--recognizers", nargs="+", choices=sorted(RECOGNIZERS), default=["pretrained", "plates"])
    parser.add_argument("--rounds", type=int, default=2, help="latency passes over the photos")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="plates-recognizers-") as workdir:
        results = {name: measure(name, args.manifest, args.rounds, Path(workdir)) for name in args.recognizers}
    for name, r in results.items():
        stages = r["stages"]
        recognizer = stages["stn"] + stages["lprnet"] + stages["reading"]
        print(f"\n== {name}\n{r['summary']}")
        print(f"end to end {r['end_to_end']:.3f}, reading of found plates {r['reading']:.3f}")
        print(f"misread: {', '.join(f'{a} read {b}' for a, b in r['misread']) or 'none'}")
        print(f"phantom texts ({len(r['phantoms'])}): {', '.join(r['phantoms']) or 'none'}")
        print(f"lprnet read {r['crops']} crops for {r['plates']} plates ({r['crops'] / max(r['plates'], 1):.2f} a "
              f"plate); {r['first_look_only']:.1%} of plates read from the first look alone")
        print("in process, ms: " + ", ".join(f"{s} {v:.1f}" for s, v in stages.items())
              + f"; stn + lprnet + reading {recognizer:.1f} = {recognizer / stages['detector']:.2f} x the detector")
        print(f"served latency over the photos: p50 {r['p50']:.1f} ms, p90 {r['p90']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
