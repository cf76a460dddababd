"""The ONNX detector beside a busy LPRNet: with ONNX Runtime's default threads, which spin while they wait, and with
the served ones, which sleep (plates.detection.PlateDetector). Prints each one's p50 and the LPRNet runs the other
process got through meanwhile: both must share the two cores in the server.

    poetry run python scripts/compare_onnx_spinning.py ../shared/data/samples/car.jpg [--photos 20]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import numpy as np

from plates.export import DEFAULT_REPOSITORY
from plates.photos import decode_pixels, read_photo

ONNX = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"


def busy_lprnet(stop, runs) -> None:
    """LPRNet on 2 crops again and again, as the server's lprnet model reads first looks, until `stop`."""
    import torch

    torch.set_num_threads(1)
    lprnet = torch.jit.load(str(DEFAULT_REPOSITORY / "lprnet" / "1" / "model.pt")).eval()
    crops = torch.randn(2, 3, 24, 94)
    with torch.inference_mode():
        while not stop.is_set():
            lprnet(crops)
            runs.value += 1


def timed(spinning: bool, image: np.ndarray, photos: int) -> tuple[float, int]:
    """The detector's p50 in ms over `photos` photos a little apart, and the LPRNet runs beside it meanwhile."""
    import onnxruntime

    from plates.detection import PlateDetector

    detector = PlateDetector(ONNX)
    if spinning:  # Ultralytics' own session: default options
        session = onnxruntime.InferenceSession(str(ONNX), providers=["CPUExecutionProvider"])
        detector.model.predictor.model.session = session
    for _ in range(3):
        detector.detect(image)
    stop, runs = multiprocessing.Event(), multiprocessing.Value("i", 0)
    other = multiprocessing.Process(target=busy_lprnet, args=(stop, runs))
    other.start()
    time.sleep(2)  # let it load its model
    start_runs, seconds = runs.value, []
    for _ in range(photos):
        start = time.perf_counter()
        detector.detect(image)
        seconds.append(time.perf_counter() - start)
        time.sleep(0.02)  # a gap between photos, as between requests: where spinning threads hold on
    done = runs.value - start_runs
    stop.set()
    other.join()
    return float(np.median(seconds)) * 1000.0, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("photo")
    parser.add_argument("--photos", type=int, default=20)
    args = parser.parse_args()
    image = decode_pixels(read_photo(args.photo), args.photo)
    for spinning in (True, False, True, False):
        p50, runs = timed(spinning, image, args.photos)
        label = "spinning (ONNX Runtime's default)" if spinning else "sleeping (served)"
        print(f"{label}: detector p50 {p50:.1f} ms; LPRNet beside it ran {runs} times meanwhile", flush=True)


if __name__ == "__main__":
    main()
