"""Where the served detector's time goes on a device, stage by stage, and what each way to cut it would save.

    python benchmarks/detector_stages.py car.jpg --repository REPOSITORY --device cuda:0 [--frame 1920x1080]

The repository's yolo (format torch, plates.detection.torch_detector) times, each the median of --runs after warm-up
runs: the photo's decoding on the device (nvJPEG on a GPU) and its copy to the host; the whole detection as served; then
its parts: Ultralytics' letterbox on the host, the letterboxed bytes to the device as float planes, the network's
forward pass eagerly and replayed as one CUDA graph, and NMS with box scaling; and, beside them, Ultralytics' own
predictor on the same weights (what served the detector before plates.detection.torch_detector) with its own split, and
the letterbox done on the device by torch. Figures only: compare them as ratios within one run (scripts/gpu-check.sh
runs it; docs/gpu.md has its figures).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import torch
import torch.nn.functional as F
from ultralytics import YOLO

from plates.detection.onnx_detector import letterbox
from plates.detection.torch_detector import TorchSession
from plates.inference.detector_model import DetectorModel
from plates.inference.model_config import read_config
from plates.inference.photo_decoding import decode_image


def median_ms(call: Callable[[], object], runs: int, device: torch.device) -> float:
    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(5):
        call()
    times = []
    for _ in range(runs):
        sync()
        start = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def letterbox_on_device(image: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """HWC BGR uint8 on the device to the (1, 3, H, W) RGB float tensor in [0, 1] Ultralytics feeds its network,
    resized and padded with its gray in torch, on the image's device."""
    height, width = image.shape[:2]
    scale = min(shape[0] / height, shape[1] / width)
    size = round(height * scale), round(width * scale)
    chw = image.permute(2, 0, 1).flip(0).unsqueeze(0).float()
    resized = F.interpolate(chw, size=size, mode="bilinear", align_corners=False)
    top, left = (shape[0] - size[0]) // 2, (shape[1] - size[1]) // 2
    framed = F.pad(resized, (left, shape[1] - size[1] - left, top, shape[0] - size[0] - top), value=114.0)
    return framed / 255.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photo", type=Path)
    parser.add_argument("--repository", type=Path, required=True, help="a model repository whose yolo runs torch")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--frame", default="1920x1080", help="also time the photo resized to this camera frame")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    device = torch.device(args.device)
    yolo = args.repository / "yolo"
    model = DetectorModel(read_config(yolo / "config.pbtxt"), yolo / "1", device)
    photos = {args.photo.name: args.photo.read_bytes()}
    if args.frame:
        width, height = (int(v) for v in args.frame.split("x"))
        pixels = cv2.imread(str(args.photo))
        frame = cv2.resize(pixels, (width, height), interpolation=cv2.INTER_CUBIC)
        encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
        photos[f"{args.photo.name}@{args.frame}"] = encoded.tobytes()
    for name, data in photos.items():
        image = decode_image(data, device)
        host = image.cpu().numpy()
        detector = model.detector
        settings = detector.settings
        imgsz, conf = settings.imgsz[0], settings.conf[0]
        session = TorchSession(yolo / "1" / "plate_detector.pt", device)
        pixels = letterbox(host, imgsz, session.stride)
        planes = session.planes(pixels)
        rows = {
            "decoding on the device": median_ms(lambda: decode_image(data, device), args.runs, device),
            "the photo to the host": median_ms(lambda: image.cpu(), args.runs, device),
            f"detection as served (CUDA graphs {detector.network.session.cuda_graphs})": median_ms(
                lambda: model.detect(image), args.runs, device
            ),
            "  letterbox on the host": median_ms(lambda: letterbox(host, imgsz, session.stride), args.runs, device),
            "  to the device as float planes": median_ms(lambda: session.planes(pixels), args.runs, device),
        }
        with torch.no_grad():
            rows["  forward pass, eager"] = median_ms(lambda: session.network(planes), args.runs, device)
            raw = session.network(planes)[0]
            rows["  NMS and box scaling"] = median_ms(
                lambda: suppress(raw.clone(), pixels, host, conf, settings), args.runs, device
            )
            if device.type == "cuda":
                graphed = TorchSession(yolo / "1" / "plate_detector.pt", device, cuda_graphs=True)
                graphed.infer(pixels)
                graph = next(iter(graphed.graphs.values()))
                rows["  forward pass, one CUDA graph"] = median_ms(graph.graph.replay, args.runs, device)
            rows["letterbox on the device (torch), instead"] = median_ms(
                lambda: letterbox_on_device(image, tuple(planes.shape[2:])), args.runs, device
            )
        predictor = YOLO(str(yolo / "1" / "plate_detector.pt"), task="detect")
        with tempfile.TemporaryDirectory() as scratch:

            def predict():
                return predictor.predict(
                    host,
                    imgsz=imgsz,
                    conf=conf,
                    iou=settings.iou,
                    agnostic_nms=True,
                    max_det=settings.max_det,
                    device=str(device),
                    verbose=False,
                    project=scratch,
                    name="predict",
                    exist_ok=True,
                )[0]

            rows["Ultralytics' predictor, instead"] = median_ms(predict, args.runs, device)
            speeds = [predict().speed for _ in range(args.runs)]
        for stage in ("preprocess", "inference", "postprocess"):
            rows[f"  its {stage}"] = statistics.median(speed[stage] for speed in speeds)
        print(
            f"{name} ({image.shape[1]}x{image.shape[0]}, letterboxed to {tuple(planes.shape[2:])}) on {device}, "
            f"median of {args.runs} in ms:"
        )
        for stage, ms in rows.items():
            print(f"  {stage:<52} {ms:7.2f}")


def suppress(raw: torch.Tensor, pixels, host, conf: float, settings) -> torch.Tensor:
    """What plates.detection.onnx_detector.look does after the network: NMS, then boxes scaled to the photo."""
    from ultralytics.utils import nms, ops

    (found,) = nms.non_max_suppression(raw, conf, settings.iou, agnostic=True, max_det=settings.max_det)
    return ops.scale_boxes(pixels.shape[1:3], found[:, :4], host.shape[:2]).cpu()


if __name__ == "__main__":
    main()
