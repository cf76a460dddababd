"""This checkout's served pipeline against another's (main's, exported with `git archive`), in one run on one machine:
what an issue's "before against after" asks for, end to end through Triton.

Both servers run at once on free ports (baseline.serving: bare LocalServers, each its own checkout's code, model
repository and weights), warmed with car.jpg; each photo is then sent to one and to the other in turns, the order
swapped each round, so that both meet the same machine. For every manifest: detection, recognition and end to end
(plates.evaluation.scoring, as `plates eval` scores them) of each, where readings fail, and the texts one reads end
to end and the other does not. Over the `--time` manifests' photos (each sent `--rounds` times) and a 1920x1080
frame with no plate (cat.jpeg enlarged, 10 times a round): p50 and p90 of each, and this checkout's as a ratio.

    git archive 82d3cc0 | tar -x -C /tmp/plates-82d3     # into an empty folder beside ../shared's link
    poetry run python benchmarks/against_baseline.py --baseline /tmp/plates-82d3 \
        --time ../shared/data/e2e.json runs/by_eye/test.json --score ../shared/data/val_texts.json [--rounds 5]

A checkout from before plates/build/paths.py (82d3cc0 and older) finds its weights, typeface and data in the
`shared` folder beside it: export it next to a link to ../shared (`ln -s /work/shared /tmp/shared`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from baseline import baseline_python, serving  # noqa: E402
from compare_parameters import changed_repository  # noqa: E402
from conftest import SAMPLES  # noqa: E402

from plates.build.paths import DEFAULT_REPOSITORY  # noqa: E402
from plates.client.retry import NO_RETRY  # noqa: E402
from plates.client.service import Plate, PlatesClient  # noqa: E402
from plates.evaluation.manifests import LabelledPhoto, load_manifest  # noqa: E402
from plates.evaluation.report import format_summary  # noqa: E402
from plates.evaluation.scoring import Report, evaluate  # noqa: E402
from plates.server import candidates  # noqa: E402

WARMUP = 3
FRAMES_PER_ROUND = 10
NAMES = ("baseline", "this")


def found_texts(photos: list[LabelledPhoto], report: Report) -> Counter:
    """(photo, text) of every labelled text read end to end: the photo's texts but those `report` (its scoring)
    did not find."""
    not_found = {errors.image: Counter(e["expected"] for e in errors.texts_not_found) for errors in report.errors}
    found: Counter = Counter()
    for photo in photos:
        for text, count in (Counter(photo.texts) - not_found.get(photo.label, Counter())).items():
            found[photo.label, text] += count
    return found


def servers(args: argparse.Namespace, stack: ExitStack) -> dict[str, PlatesClient]:
    """A client of each server, started and ready, closed and stopped with `stack`: the baseline checkout's and this
    one's, each a bare LocalServer of its own code; or with --set, this checkout's model repository changed and as
    committed, each served and warmed (plates.server.candidates)."""
    if args.set:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        repositories = {
            "baseline": changed_repository(folder / "model_repository", args.set),
            "this": DEFAULT_REPOSITORY,
        }
        urls = {
            name: stack.enter_context(candidates.serving(repository, log_file=folder / f"{name}.log")).url
            for name, repository in repositories.items()
        }
        return {name: stack.enter_context(PlatesClient(url, timeout=120, retry=NO_RETRY)) for name, url in urls.items()}
    trees = {
        "baseline": (args.baseline.resolve(), baseline_python(args.baseline.resolve())),
        "this": (ROOT, sys.executable),
    }
    clients = {}
    for name, (tree, python) in trees.items():
        served = stack.enter_context(serving(tree, python))
        clients[name] = stack.enter_context(PlatesClient(served.url, timeout=120, retry=NO_RETRY))
        print(f"{name}: {tree} ready in {served.wait_ready(clients[name]):.0f} s", flush=True)
    return clients


def percentiles(seconds: list[float]) -> tuple[float, float]:
    return float(np.median(seconds)) * 1000, float(np.percentile(seconds, 90)) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    against = parser.add_mutually_exclusive_group(required=True)
    against.add_argument("--baseline", type=Path, help="the other checkout (main's, exported with git archive)")
    against.add_argument("--set", nargs="+", metavar="MODEL:KEY=VALUE", help="or this one with these parameters")
    parser.add_argument("--time", nargs="*", default=[], metavar="MANIFEST", help="manifests scored and timed")
    parser.add_argument("--score", nargs="*", default=[], metavar="MANIFEST", help="manifests scored, read once")
    parser.add_argument("--rounds", type=int, default=3, help="times each --time photo is sent to each (default 3)")
    parser.add_argument("--no-plate", type=Path, default=SAMPLES / "cat.jpeg", help="enlarged to the no-plate frame")
    parser.add_argument("--slowest", type=int, default=0, metavar="N", help="list the N photos that slowed most")
    args = parser.parse_args(argv)
    if not args.time and not args.score:
        parser.error("give manifests to --time, --score or both")

    manifests = {path: load_manifest(path) for path in [*args.time, *args.score]}
    files = {photo.image: Path(photo.image).read_bytes() for photos in manifests.values() for photo in photos}
    frame = cv2.imencode(".jpg", cv2.resize(cv2.imread(str(args.no_plate)), (1920, 1080)))[1].tobytes()
    car = (SAMPLES / "car.jpg").read_bytes()
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    with ExitStack() as stack:
        clients = servers(args, stack)
        for client in clients.values():
            for _ in range(WARMUP):
                client.recognize(car)

        answers: dict[tuple[str, str], list[Plate]] = {}
        times: dict[tuple[str, bool], list[float]] = {(name, f): [] for name in NAMES for f in (False, True)}
        by_photo: dict[tuple[str, str], list[float]] = {}
        timed = list(dict.fromkeys(photo.image for path in args.time for photo in manifests[path]))
        scored = [image for image in dict.fromkeys(files) if image not in set(timed)]
        for round_ in range(max(1, args.rounds) if timed else 0):
            order = NAMES if round_ % 2 == 0 else NAMES[::-1]
            for image in [*timed, *[None] * FRAMES_PER_ROUND]:
                for name in order:
                    started = time.perf_counter()
                    plates = clients[name].recognize(frame if image is None else files[image])
                    took = time.perf_counter() - started
                    times[name, image is None].append(took)
                    if image is not None:
                        by_photo.setdefault((name, image), []).append(took)
                        answers.setdefault((name, image), plates)
            print(f"round {round_ + 1}: {len(timed)} photos and {FRAMES_PER_ROUND} frames", flush=True)
        for number, image in enumerate(scored):
            for name in NAMES if number % 2 == 0 else NAMES[::-1]:
                answers[name, image] = clients[name].recognize(files[image])
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")

    for path, photos in manifests.items():
        print(f"\n{path} (dev), {len(photos)} photos")
        found = {}
        for name in NAMES:
            predictions = [answers[name, photo.image] for photo in photos]
            report = evaluate(photos, predictions)
            found[name] = found_texts(photos, report)
            print(f"  {name:8}: {format_summary(report)}")
            for line in report.misreads.format():
                print(f"            {line}")
        for gained, lost, what in (
            (found["this"], found["baseline"], "read only by this"),
            (found["baseline"], found["this"], "read only by the baseline"),
        ):
            only = sorted((gained - lost).elements())
            print(f"  {what}: {', '.join(f'{text} ({label})' for label, text in only) or 'none'}")
    if timed:
        print(
            f"\nserved over {len(timed)} photos, {args.rounds} rounds, and a no-plate frame {FRAMES_PER_ROUND} times "
            "a round:"
        )
        for frames, what in ((False, "photos"), (True, "no-plate 1920x1080 frame")):
            (p50, p90), (q50, q90) = (percentiles(times[name, frames]) for name in NAMES)
            print(f"  {what}: baseline p50 {p50:.1f} ms, p90 {p90:.1f} ms; this {q50 / p50:.3f}, {q90 / p90:.3f} of it")
        if args.slowest:
            # Each photo's median over its rounds: where the p90's extra time comes from.
            medians = {key: float(np.median(seconds)) * 1000 for key, seconds in by_photo.items()}
            slowed = sorted(timed, key=lambda image: medians["baseline", image] - medians["this", image])
            print(f"  the {args.slowest} photos that slowed most, median ms (baseline, this):")
            for image in slowed[: args.slowest]:
                print(f"    {medians['baseline', image]:6.1f} {medians['this', image]:6.1f}  {image}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
