"""The served detector's pass (plates.onnx_detector: Ultralytics' letterbox, NMS and scaling called directly, OpenVINO
turning the letterboxed bytes into the network's input) against the same ONNX file on OpenVINO under Ultralytics'
predictor, which converted the input in numpy and torch (the served arrangement before), in one process, photo by
photo in turns, over e2e.json's photos at 608 px: ms per photo, and how far their boxes are apart (figures, not
assertions: read the ratios).

    poetry run python benchmarks/onnx_detector_vs_predictor.py [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import time

import cv2
import numpy as np

from plates.export import DEFAULT_REPOSITORY
from plates.weights import PROJECT_ROOT

E2E = PROJECT_ROOT.parent / "shared" / "data" / "e2e.json"
ONNX = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"
IMGSZ, CONF, IOU, MAX_DET = 608, 0.2, 0.5, 100


class FloatInputSession:
    """`run` and `get_inputs` of an ONNX Runtime session, for Ultralytics' predictor, on OpenVINO f32 compiled for any
    shape and for each shape it meets (as the served session compiles the shapes it sees most)."""

    def __init__(self) -> None:
        from plates.openvino_session import CONFIG, _core

        self.core, self.config = _core(), dict(CONFIG, INFERENCE_PRECISION_HINT="f32")
        self.model = self.core.read_model(str(ONNX))
        self.requests = {}

    def get_inputs(self):
        return [type("Input", (), {"name": port.get_any_name()}) for port in self.model.inputs]

    def run(self, output_names, feeds):
        (pixels,) = feeds.values()
        if pixels.shape not in self.requests:
            model = self.model.clone()
            model.reshape(list(pixels.shape))
            self.requests[pixels.shape] = self.core.compile_model(model, "CPU", self.config).create_infer_request()
        return [np.array(self.requests[pixels.shape].infer([pixels])[0])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()

    from ultralytics import YOLO

    from plates.onnx_detector import OnnxDetector

    images = [cv2.imread(str(E2E.parent / entry["image"])) for entry in json.loads(E2E.read_text())]
    predictor = YOLO(str(ONNX), task="detect")
    predictor.predict(images[0], imgsz=IMGSZ, verbose=False)  # makes the predictor and its backend
    predictor.predictor.model.session = FloatInputSession()
    served = OnnxDetector(ONNX, "openvino", precision="f32")

    def by_predictor(image):
        boxes = predictor.predict(image, imgsz=IMGSZ, conf=CONF, iou=IOU, agnostic_nms=True, max_det=MAX_DET,
                                  verbose=False)[0].boxes
        return boxes.xyxy.numpy()

    def as_served(image):
        return served.look(image, IMGSZ, CONF, IOU, MAX_DET)[0]

    apart, unequal = 0.0, 0
    for image in images:  # every shape compiled in both before timing, and the boxes compared
        for _ in range(2):
            old, new = by_predictor(image), as_served(image)
        if len(old) != len(new):
            unequal += 1
        elif len(old):
            apart = max(apart, float(np.abs(old - new).max()))
    times = {"predictor": [], "served": []}
    for _ in range(args.rounds):
        for image in images:
            for name, call in (("predictor", by_predictor), ("served", as_served)):
                start = time.perf_counter()
                call(image)
                times[name].append(time.perf_counter() - start)
    old, new = (np.array(times[name]) * 1000 for name in ("predictor", "served"))
    print(f"e2e.json's {len(images)} photos at {IMGSZ} px, OpenVINO f32, {args.rounds} rounds in turns:")
    print(f"  predictor  median {np.median(old):5.1f} ms  mean {old.mean():5.1f} ms")
    print(f"  served     median {np.median(new):5.1f} ms  mean {new.mean():5.1f} ms  "
          f"(mean ratio {new.mean() / old.mean():.3f}; per-photo differences' median {np.median(old - new):.2f} ms)")
    print(f"  boxes: {unequal} photos with another count; the rest at most {apart:.4f} px apart")


if __name__ == "__main__":
    main()
