"""The ONNX detector beside a busy LPRNet: with ONNX Runtime's default threads, which spin while they wait, and with
the served ones, which sleep (plates.detection.PlateDetector). Prints each one's p50 and how many LPRNet runs a second
the other process got through meanwhile: both share the two cores in the server.

    poetry run python benchmarks/compare_onnx_spinning.py ../shared/data/samples/car.jpg [--photos 20]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import numpy as np

from plates.export import DEFAULT_REPOSITORY
from plates.photos import decode_pixels, read_photo

ONNX = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"


def busy_lprnet(ready, stop, runs) -> None:
    """LPRNet on 2 crops again and again, as the server's lprnet model reads first looks, until `stop`."""
    import torch

    torch.set_num_threads(1)
    lprnet = torch.jit.load(str(DEFAULT_REPOSITORY / "lprnet" / "1" / "model.pt")).eval()
    crops = torch.randn(2, 3, 24, 94)
    ready.set()
    with torch.inference_mode():
        while not stop.is_set():
            lprnet(crops)
            runs.value += 1


def timed(spinning: bool, image: np.ndarray, photos: int) -> tuple[float, float]:
    """The detector's p50 in ms over `photos` photos a little apart, and the LPRNet runs a second beside it."""
    import onnxruntime

    from plates.detection import PlateDetector

    detector = PlateDetector(ONNX)
    if spinning:  # a session with the default options, as Ultralytics' predictor makes it
        detector.onnx.session.session = onnxruntime.InferenceSession(str(ONNX), providers=["CPUExecutionProvider"])
    for _ in range(3):
        detector.detect(image)
    # Spawned, not forked: a child forked from a process with ONNX Runtime's and PyTorch's threads can hang.
    context = multiprocessing.get_context("spawn")
    ready, stop, runs = context.Event(), context.Event(), context.Value("i", 0)
    other = context.Process(target=busy_lprnet, args=(ready, stop, runs))
    other.start()
    ready.wait(120)
    start_runs, seconds, began = runs.value, [], time.perf_counter()
    for _ in range(photos):
        start = time.perf_counter()
        detector.detect(image)
        seconds.append(time.perf_counter() - start)
        time.sleep(0.02)  # a gap between photos, as between requests: where spinning threads hold on
    rate = (runs.value - start_runs) / (time.perf_counter() - began)
    stop.set()
    other.join()
    return float(np.median(seconds)) * 1000.0, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("photo")
    parser.add_argument("--photos", type=int, default=20)
    args = parser.parse_args()
    image = decode_pixels(read_photo(args.photo), args.photo)
    for spinning in (True, False, True, False):
        p50, rate = timed(spinning, image, args.photos)
        label = "spinning (ONNX Runtime's default)" if spinning else "sleeping (served)"
        print(f"{label}: detector p50 {p50:.1f} ms; LPRNet beside it {rate:.0f} runs/s", flush=True)


if __name__ == "__main__":
    main()
