"""Detectors against each other, in one run, end to end through the served pipeline (issue 37's figures).

    poetry run python benchmarks/compare_detectors.py \
        NAME=WEIGHTS[:IMGSZ[:FORMAT[:CONF[:PRECISION[:SECOND_LOOK[:TWO_LINE_ASPECT]]]]]] ... [--manifests M ...]
    poetry run python benchmarks/compare_detectors.py f32=weights/plate_detector.pt:608:openvino:0.2:f32 \\
        int8=weights/plate_detector.pt:608:openvino:0.2:int8

Each candidate is a detector's weights (a one-class or two-class Ultralytics checkpoint), the inference size it is
served at, its runtime (`format`), its confidence threshold, OpenVINO's precision and the size of its second look
(`second_look_imgsz`, 0: none; `/FILL` its `second_look_fill`) and the aspect under which a one-line box is read as two
rows too (`two_line_aspect`, 0: never) (defaults: the config's). It gets a model repository of its own:
model_repository/'s configs, STN and LPRNet (so build it first), its detector exported to ONNX as the build exports it.
PRECISION `int8` serves that export quantized to INT8 as convert/quantize_detector.py quantizes the committed weights
(plates.build.quantization, calibrated on 64 of `--calibration`'s training photos at the candidate's size). Every
candidate's Triton server runs at once, and then:
- each manifest is scored as `plates eval --url` scores it (its summary line, and recall and reading of the plates
  found among those with a text), and again on its plates at least 40 px wide alone (SMALL_WIDTH: rendered two-line
  plates go down to 9 px, unreadable to anyone);
- served latency over the first manifest's photos, one request at a time, the servers taking turns photo by photo
  (`--rounds` passes after a warm-up pass), so that the machine's load falls on every candidate alike: p50 and p90,
  and each one's ratio to the first candidate's;
- a 1920x1080 frame with no plate (a photo of a cat, stretched), the same way: what `plates bench` times on it.
`--recognizer CHECKPOINT --two-line-layout LAYOUT` has every candidate read with a recognizer not yet served, given
two-line plates in the layout it was trained on (yolo's `two_line_layout`). `--rows NAME=CHECKPOINT` has candidate
NAME read two-line plates' rows with a checkpoint of `convert/train_recognizer.py --two-line rows` (model
lprnet_rows), so that two of them can differ only in that. `--servers NAME=HOST:PORT` measures a Triton server
already running as it is, first (so the ratios are to it): another checkout's `plates serve`, to compare code, not
only weights and settings, in one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import cv2
import numpy as np

from plates.build.paths import DEFAULT_REPOSITORY, shared_dir
from plates.build.quantization import calibration_photos, quantize_detector
from plates.build.repository import (
    export_detector,
    model_files,
    out_of_date,
    set_parameter,
    write_recognizer,
    write_two_line_recognizer,
)
from plates.client.service import PlatesClient
from plates.detection.detector import detector_format, inference_precision
from plates.evaluation.manifests import LabelledPhoto, load_manifest
from plates.evaluation.report import format_summary
from plates.evaluation.scoring import SMALL_WIDTH, Report, evaluate
from plates.inference.model_config import positive_int_list, read_config
from plates.recognition.crops import two_line_layout
from plates.server.candidates import copy_repository, serving
from plates.training.trainer import load_checkpoint

SHARED = shared_dir() / "data"
MANIFESTS = [
    SHARED / "e2e.json",
    SHARED / "detect",
    SHARED / "val_texts.json",
    Path("runs/closeups/closeups.json"),
    Path("runs/scenes/val_two_line.json"),
]


def candidate(text: str) -> tuple[str, Path, dict[str, str]]:
    name, _, rest = text.partition("=")
    weights, imgsz, format, conf, precision, second_look, aspect, *extra = rest.split(":") + [""] * 6
    look_size, _, look_fill = second_look.partition("/")
    sizes_ok = all(not size or size.replace("+", "").isdigit() for size in (imgsz, look_size))
    aspect_ok = not aspect or aspect.replace(".", "", 1).isdigit()
    if not name or not Path(weights).is_file() or not sizes_ok or not aspect_ok or any(extra):
        raise argparse.ArgumentTypeError(
            f"{text!r}: NAME=WEIGHTS[:IMGSZ[:FORMAT[:CONF[:PRECISION[:SECOND_LOOK[:TWO_LINE_ASPECT]]]]]], WEIGHTS a "
            "file, IMGSZ pixels (608+256: a pass at each, CONF then one threshold each, 0.2+0.4), SECOND_LOOK pixels "
            "(0: none), or pixels/fill (256/1: the photo fills the frame), TWO_LINE_ASPECT a number (0: never)"
        )
    try:
        if format:
            detector_format(format)
        if precision:
            inference_precision(precision)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from error
    settings = {
        "imgsz": imgsz,
        "format": format,
        "conf": conf,
        "precision": precision,
        "second_look_imgsz": look_size,
        "second_look_fill": look_fill,
        "two_line_aspect": aspect,
    }
    return name, Path(weights), {key: value.replace("+", " ") for key, value in settings.items() if value}


def rows_checkpoint(text: str) -> tuple[str, Path]:
    name, _, checkpoint = text.partition("=")
    if not name or not Path(checkpoint).is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: NAME=CHECKPOINT, CHECKPOINT a file")
    return name, Path(checkpoint)


def running_server(text: str) -> tuple[str, str]:
    name, _, url = text.partition("=")
    host, _, port = url.rpartition(":")
    if not name or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: NAME=HOST:PORT, a Triton server's HTTP endpoint")
    return name, url


def build(
    weights: Path,
    settings: dict[str, str],
    repository: Path,
    calibration: list[Path],
    recognizer: Path | None = None,
    rows: Path | None = None,
) -> None:
    files = model_files(repository)
    copy_repository(repository, leave_out=[files.detector.name, "*.onnx"])
    if recognizer:
        write_recognizer(repository, *load_checkpoint(recognizer), recognizer.parent.name)
    if rows:
        write_two_line_recognizer(repository, *load_checkpoint(rows))
    shutil.copyfile(weights, files.detector)
    exported = export_detector(files.detector)
    config = repository / "yolo" / "config.pbtxt"
    for key, value in settings.items():
        set_parameter(config, key, value)
    parameters = read_config(config)
    if parameters.parameter("precision", inference_precision) == "int8":  # made as the committed one is
        imgsz = parameters.parameter("imgsz", positive_int_list)[0]
        quantize_detector(exported, calibration, imgsz, files.int8)


def not_small(photo: LabelledPhoto) -> LabelledPhoto:
    """`photo` with only its plates at least SMALL_WIDTH wide: scored on it, recall and reading are theirs (what
    is found on the others counts only against precision)."""
    return dataclasses.replace(photo, plates=[p for p in photo.plates if p.box[2] - p.box[0] >= SMALL_WIDTH])


def found_and_read(report: Report) -> str:
    found, reading, e2e = report.detection_recall, report.recognition, report.end_to_end
    return (
        f"found {found.hits}/{found.total}; read right {reading.hits} of the {reading.total} found with a text; "
        f"end to end {e2e.hits}/{e2e.total}"
    )


def timed(client: PlatesClient, data: bytes) -> float:
    start = time.perf_counter()
    client.recognize(data)
    return (time.perf_counter() - start) * 1000


def in_turns(clients: dict[str, PlatesClient], files: list[bytes], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per request for each client, the clients taking turns photo by photo, after a warm-up pass."""
    times = {name: [] for name in clients}
    for round in range(rounds + 1):
        for data in files:
            for name, client in clients.items():
                elapsed = timed(client, data)
                if round:
                    times[name].append(elapsed)
    return times


def print_times(what: str, times: dict[str, list[float]]) -> None:
    first = next(iter(times.values()))
    p50, p90 = np.percentile(first, 50), np.percentile(first, 90)
    print(f"\n{what}, ms (ratio to {next(iter(times))}):")
    for name, values in times.items():
        a, b = np.percentile(values, 50), np.percentile(values, 90)
        print(f"  {name:10} p50 {a:6.1f} ({a / p50:.2f})  p90 {b:6.1f} ({b / p90:.2f})  n={len(values)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "candidates",
        nargs="*",
        type=candidate,
        help="NAME=WEIGHTS[:IMGSZ[:FORMAT[:CONF[:PRECISION[:SECOND_LOOK[:TWO_LINE_ASPECT]]]]]]",
    )
    parser.add_argument(
        "--manifests",
        nargs="+",
        default=[str(m) for m in MANIFESTS],
        help="plates eval manifests; latency on the first's photos",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed passes")
    parser.add_argument("--no-plate", type=Path, default=SHARED / "samples" / "cat.jpeg")
    parser.add_argument(
        "--score-floors",
        nargs="+",
        type=float,
        default=[],
        help="also score each set keeping only the boxes the detector scored at least this: what a "
        "higher `conf` would find, from one pass (latency is timed at the candidates' own `conf`)",
    )
    parser.add_argument(
        "--calibration",
        type=Path,
        default=Path("runs/scenes2/images/train"),
        help="training photos to calibrate INT8 on (64 of them)",
    )
    parser.add_argument(
        "--recognizer",
        type=Path,
        help="every candidate reads with this checkpoint of "
        "convert/train_recognizer.py, not the built repository's STN and LPRNet",
    )
    parser.add_argument(
        "--two-line-layout",
        type=two_line_layout,
        help="yolo's two_line_layout for every candidate: the layout --recognizer was trained on",
    )
    parser.add_argument(
        "--rows",
        nargs="+",
        type=rows_checkpoint,
        default=[],
        help="NAME=CHECKPOINT: candidate NAME reads two-line plates' rows with this checkpoint",
    )
    parser.add_argument(
        "--servers",
        nargs="+",
        type=running_server,
        default=[],
        help="NAME=HOST:PORT: a Triton server already running, measured as it is, before the candidates",
    )
    args = parser.parse_args(argv)
    if not args.candidates and not args.servers:
        parser.error("name a candidate or a --servers server")
    rows = dict(args.rows)
    if unknown := rows.keys() - {name for name, _, _ in args.candidates}:
        parser.error(f"--rows names no candidate: {', '.join(sorted(unknown))}")
    why = out_of_date(DEFAULT_REPOSITORY)
    if why:
        parser.error(
            f"{DEFAULT_REPOSITORY} is not built as the weights are now ({why}): python "
            "convert/build_model_repository.py"
        )
    frame = cv2.resize(cv2.imread(str(args.no_plate)), (1920, 1080))
    no_plate = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
    with tempfile.TemporaryDirectory(prefix="plates-detectors-") as workdir, ExitStack() as stack:
        clients = {name: stack.enter_context(PlatesClient(url)) for name, url in args.servers}
        calibration = calibration_photos(args.calibration) if args.candidates else []
        layout = {"two_line_layout": args.two_line_layout} if args.two_line_layout else {}
        for name, weights, settings in args.candidates:
            repository = Path(workdir) / name
            build(weights, {**settings, **layout}, repository, calibration, args.recognizer, rows.get(name))
            server = stack.enter_context(serving(repository, Path(workdir) / f"{name}.log"))
            clients[name] = stack.enter_context(PlatesClient(server.url))
        for manifest in args.manifests:
            photos = load_manifest(manifest)
            print(f"\n-- {manifest}: {len(photos)} photos")
            for name, client in clients.items():
                served = [client.recognize(photo.image.read_bytes()) for photo in photos]
                for floor in dict.fromkeys([0.0, *args.score_floors]):
                    predictions = [[plate for plate in plates if plate.score >= floor] for plates in served]
                    report = evaluate(photos, predictions)
                    print(f"  {name:10} {format_summary(report)}" + (f" | boxes scored >= {floor:g}" if floor else ""))
                    print(f"  {'':10} all plates: {found_and_read(report)}")
                    wide = evaluate([not_small(photo) for photo in photos], predictions)
                    print(f"  {'':10} plates at least {SMALL_WIDTH:g} px wide: {found_and_read(wide)}")
        files = [photo.image.read_bytes() for photo in load_manifest(args.manifests[0])]
        print_times(f"served, over {args.manifests[0]}'s {len(files)} photos", in_turns(clients, files, args.rounds))
        print_times("served, a 1920x1080 frame with no plate", in_turns(clients, [no_plate], 20 * args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
