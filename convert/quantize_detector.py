"""Write weights/plate_detector.int8.onnx: the committed detector's ONNX export with its convolutions in INT8.

    poetry run python convert/quantize_detector.py        # calibrated on 64 training photos of runs/scenes2

The export is the one the build makes (plates.build.repository.export_detector); the calibration photos are drawn with a
fixed seed from --photos, which must hold training photos only, never those the project measures itself on
(`runs/scenes2/images/train`: convert/make_scenes.py, docs/scenes.md). The file records the SHA-256 of the weights it
was made from, so a test fails when the detector changes and this file is not made again; its own SHA-256 then goes into
plates/build/weights.py.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from plates.build.paths import PROJECT_ROOT
from plates.build.quantization import QUANTIZED_FROM, calibration_photos, quantize_detector
from plates.build.repository import DETECTOR_FILE, export_detector
from plates.build.weights import find_weights, sha256_of
from plates.detection.detector import INT8_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--photos", type=Path, default=Path("runs/scenes2/images/train"), help="the training photos to calibrate on"
    )
    parser.add_argument("--count", type=int, default=64, help="how many of them")
    parser.add_argument("--imgsz", type=int, default=608, help="the size the detector is served at")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "weights" / INT8_FILE)
    args = parser.parse_args(argv)
    photos = calibration_photos(args.photos, args.count)
    if not photos:
        print(f"error: no photos in {args.photos}; make them with convert/make_scenes.py", file=sys.stderr)
        return 2
    weights = find_weights(DETECTOR_FILE)
    with tempfile.TemporaryDirectory(prefix="plates-quantize-") as folder:
        copy = Path(folder) / DETECTOR_FILE
        shutil.copyfile(weights, copy)
        quantize_detector(export_detector(copy), photos, args.imgsz, args.out, {QUANTIZED_FROM: sha256_of(weights)})
    print(f"wrote {args.out} (SHA-256 {sha256_of(args.out)}), calibrated on {len(photos)} photos of {args.photos}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
