"""plates eval MANIFEST [--url localhost:8000] [--json] [--split val]: score the served pipeline on labelled photos.

The logic lives in `plates.evaluation`; this runs each photo through the server and prints the report.
"""

from __future__ import annotations

import argparse
import sys

from plates.cli.client import add_url_option
from plates.client.readiness import require_ready
from plates.client.service import Plate, PlatesClient
from plates.evaluation.manifests import load_manifest
from plates.evaluation.report import format_report, format_sweep, report_to_json
from plates.evaluation.scoring import evaluate, sweep
from plates.exceptions import naming
from plates.inference.model_config import unit_float
from plates.photos.files import read_image

PROGRESS_EVERY = 10


def add_eval_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "eval",
        help="score the served pipeline on labelled photos (detection, small plates, recognition, end-to-end)",
        description=(
            "Run every photo of MANIFEST through the server and report detection recall and precision at "
            "IoU >= 0.5, recall on plates narrower than 40 px, recognition and end-to-end accuracy, and the "
            "photos, boxes and texts it got wrong. The last line of the plain report is a one-line summary."
        ),
    )
    parser.add_argument(
        "manifest",
        metavar="MANIFEST",
        help='a JSON manifest ([{"image": ..., "plates": [{"box": [x1, y1, x2, y2], "text": ...}]}], or the '
        "e2e.json form with a photo-level text), or a YOLO dataset folder or its data.yaml",
    )
    add_url_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the plain report")
    parser.add_argument("--split", default="val", help="the split of a YOLO dataset to evaluate (default val)")
    parser.add_argument(
        "--min-text-score",
        nargs="+",
        type=_threshold,
        default=[],
        metavar="T",
        help="also score the texts as the server would return them with each of these min_text_score values, "
        "re-decided from the plates' candidates (one pass over the photos)",
    )
    parser.set_defaults(run=run_eval)
    return parser


def run_eval(args: argparse.Namespace) -> int:
    photos = load_manifest(args.manifest, split=args.split)
    require_ready(args.url)
    predictions: list[list[Plate]] = []
    with PlatesClient(args.url) as client:
        for number, photo in enumerate(photos, start=1):
            with naming(f"photo {photo.label}"):
                predictions.append(client.recognize(read_image(photo.image)))
            if number % PROGRESS_EVERY == 0 or number == len(photos):
                print(f"eval: {number}/{len(photos)} photos", file=sys.stderr, flush=True)
    report = evaluate(photos, predictions)
    swept = sweep(photos, predictions, args.min_text_score)
    if args.json:
        print(report_to_json(report, swept), flush=True)
    else:
        if swept:
            print(format_sweep(swept) + "\n", flush=True)
        print(format_report(report), flush=True)
    return 0


def _threshold(text: str) -> float:
    try:
        return unit_float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from error
