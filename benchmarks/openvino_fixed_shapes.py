"""The detector's ONNX file on OpenVINO compiled for a fixed input shape (plates.openvino_session: each shape on its
third photo, up to FIXED_SHAPES shapes) against the model compiled for any shape, in one process, in turns, at the
letterbox shapes of e2e.json's photos, each fed the first such photo as the detector letterboxes it; with what
compiling one takes, and what holding them all takes of the process's memory (figures, not assertions: read the
ratios).

    poetry run python benchmarks/openvino_fixed_shapes.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import numpy as np

from plates.export import DEFAULT_REPOSITORY
from plates.weights import PROJECT_ROOT

E2E = PROJECT_ROOT.parent / "shared" / "data" / "e2e.json"


def in_turns(calls: dict[str, callable], rounds: int) -> dict[str, float]:
    """Each call's median seconds over `rounds` rounds, the calls taking turns within a round."""
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def resident_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def detector(rounds: int) -> None:
    import cv2
    import openvino

    from plates.onnx_detector import letterbox
    from plates.openvino_session import CONFIG, taking_bgr_bytes

    photos = [E2E.parent / entry["image"] for entry in json.loads(E2E.read_text())]
    inputs: dict[tuple[int, int], np.ndarray] = {}  # letterbox shape -> its first photo, letterboxed
    shapes = Counter()
    for photo in photos:
        pixels = letterbox(cv2.imread(str(photo)), 608, stride=32)
        shapes[pixels.shape[1:3]] += 1
        inputs.setdefault(pixels.shape[1:3], pixels)
    print(f"OpenVINO f32, the detector at 608 px; e2e.json's {len(photos)} photos letterbox to "
          + ", ".join(f"{h}x{w} ({count})" for (h, w), count in shapes.most_common()))
    core = openvino.Core()
    config = dict(CONFIG, INFERENCE_PRECISION_HINT="f32")
    onnx = taking_bgr_bytes(core.read_model(str(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx")))
    any_shape = core.compile_model(onnx, "CPU", config).create_infer_request()
    held, start_mib = [], resident_mib()  # every fixed model kept, as the session keeps them
    for (height, width), pixels in sorted(inputs.items()):
        any_shape.infer([pixels])
        start = time.perf_counter()
        model = onnx.clone()
        model.reshape([1, height, width, 3])
        fixed = core.compile_model(model, "CPU", config).create_infer_request()
        fixed.infer([pixels])
        compile_s = time.perf_counter() - start
        held.append(fixed)
        times = in_turns({"any": lambda: any_shape.infer([pixels]), "fixed": lambda: fixed.infer([pixels])}, rounds)
        same = np.array_equal(any_shape.infer([pixels])[0], fixed.infer([pixels])[0])
        print(f"  {height}x{width}: any shape {1e3 * times['any']:5.1f} ms  fixed {1e3 * times['fixed']:5.1f} ms  "
              f"({times['fixed'] / times['any']:.3f}; outputs {'the same' if same else 'differ'}); compiled in "
              f"{compile_s:.2f} s")
    print(f"  the {len(held)} fixed models and their runs took {resident_mib() - start_mib:.0f} MiB more of the "
          "process's memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    detector(args.rounds)


if __name__ == "__main__":
    main()
