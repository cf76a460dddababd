"""Run the detector as PyTorch and as exports of it: same boxes? how fast? (figures, not assertions)

Every format is exported from weights/plate_detector.pt into a temporary folder the way the build exports ONNX
(plates.export.export_detector) and run through plates.detection.PlateDetector with the served settings, each in
a process of its own: runtimes in one process slow each other down (their idle threads spin, and two thread pools
share 2 cores), which a served model, alone in its stub, does not suffer.

- Boxes: on car.jpg and every val photo, how many of PyTorch's boxes an export finds at IoU >= 0.9, and how many
  it finds that PyTorch does not.
- Speed: ms per photo on car.jpg and the first --photos val photos, the formats taking turns round by round (so that
  the shared machine's load falls on all of them alike); the median over --rounds rounds, and its ratio to PyTorch.
- Repeatability: whether each format gives bit-identical boxes on every photo a second time.

    poetry run python benchmarks/compare_detector_formats.py [--formats onnx] [--photos 5] [--rounds 10]

Any Ultralytics export format runs if its package is installed. (The service runs OpenVINO on the ONNX export,
plates.openvino_session; `--formats openvino` times Ultralytics' own OpenVINO export, whose converter sends OpenVINO's
telemetry unless opted out.)
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from plates.detection import DETECTOR_FILES, same_boxes
from plates.evaluation import load_yolo
from plates.weights import PROJECT_ROOT, find_weights

SHARED = PROJECT_ROOT.parent / "shared" / "data"


def serve(connection, weights: Path, format: str, photos: list[Path]) -> None:
    """One format in its own process: detects on every photo when asked, or times one round over the first n."""
    import cv2

    from plates.detection import PlateDetector
    from plates.export import export_detector

    detector = PlateDetector(weights if format == "torch" else export_detector(weights, format))
    images = [cv2.imread(str(photo)) for photo in photos]
    while (request := connection.recv()) is not None:
        if request == "detect":
            connection.send([detector.detect(image) for image in images])
        else:
            start = time.perf_counter()
            for image in images[:request]:
                detector.detect(image)
            connection.send((time.perf_counter() - start) / request * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", nargs="+", default=["onnx"], help="Ultralytics export formats to compare")
    parser.add_argument("--photos", type=int, default=5, help="val photos timed, besides car.jpg")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--data", type=Path, default=SHARED / "detect", help="YOLO data set whose val photos to use")
    args = parser.parse_args()

    photos = [SHARED / "samples" / "car.jpg", *(photo.image for photo in load_yolo(args.data))]
    names = ["torch", *args.formats]
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as folder:
        weights = Path(folder) / DETECTOR_FILES["torch"]
        shutil.copyfile(find_weights(DETECTOR_FILES["torch"]), weights)
        workers = {}
        for name in names:  # one at a time: the exports write into the same folder
            ours, theirs = spawn.Pipe()
            spawn.Process(target=serve, args=(theirs, weights, name, photos), daemon=True).start()
            ours.send("detect")
            workers[name] = (ours, ours.recv())

        reference = workers["torch"][1]
        print(f"boxes on {len(photos)} photos (car.jpg and {len(photos) - 1} val); torch finds {sum(map(len, reference))}")
        for name in args.formats:
            matched = [same_boxes(a, b) for a, b in zip(reference, workers[name][1])]
            same, theirs, worst = sum(m[0] for m in matched), sum(m[2] for m in matched), min(m[3] for m in matched)
            print(f"  {name}: {same} of them at IoU >= 0.9 (lowest IoU of a matched box {worst:.4f}), "
                  f"{theirs - same} boxes torch does not have")  # fmt: skip

        timed = min(args.photos + 1, len(photos))
        times = {name: [] for name in names}
        for round in range(args.rounds):
            for name in names[round % len(names) :] + names[: round % len(names)]:
                workers[name][0].send(timed)
                times[name].append(workers[name][0].recv())
        torch_ms = statistics.median(times["torch"])
        print(f"ms per photo, median of {args.rounds} rounds over {', '.join(p.name for p in photos[:timed])}:")
        for name, (connection, first) in workers.items():
            connection.send("detect")
            again = connection.recv()
            repeatable = all(np.array_equal(a.boxes, b.boxes) and np.array_equal(a.scores, b.scores)
                             for a, b in zip(first, again))  # fmt: skip
            connection.send(None)
            ms = statistics.median(times[name])
            print(f"  {name}: {ms:.1f} ms, {ms / torch_ms:.2f} of torch; the same boxes and scores twice: {repeatable}")


if __name__ == "__main__":
    main()
