"""The detector's ONNX export run on the CPU, by OpenVINO or ONNX Runtime, with Ultralytics' letterbox, non-maximum
suppression and box scaling, but not its predictor.

Ultralytics' predictor spent ~5 ms a photo around the network on this project's 2 cores: its source and results objects,
the letterboxed photo made float RGB planes in numpy and torch, and back. Its letterbox, NMS and box scaling called
directly give the predictor's boxes (tests/integration/test_onnx_detector.py), and OpenVINO takes the letterboxed photo
as it is, BGR bytes, and makes the network's input inside its compiled graph: a photo's pass in ~0.97 of the time
(docs/performance.md). plates.detection.torch_detector runs the GPU's format, `torch`, the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def letterbox(image: np.ndarray, imgsz: int, stride: int) -> np.ndarray:
    """`image` (HWC BGR uint8) as the predictor letterboxes it for an ONNX model with dynamic sides: 1xHxWx3 BGR
    uint8, `imgsz` on its longer side and the shorter padded with gray to a multiple of `stride`."""
    from ultralytics.data.augment import LetterBox

    return LetterBox((imgsz, imgsz), auto=True, stride=stride)(image=image)[None]


def rgb_planes(pixels: np.ndarray) -> np.ndarray:
    """Letterboxed pixels (1xHxWx3 BGR uint8) as the network's input: 1x3xHxW RGB float32 in [0, 1]."""
    planes = np.ascontiguousarray(pixels[..., ::-1].transpose(0, 3, 1, 2)).astype(np.float32)
    planes /= 255
    return planes


def onnx_metadata(onnx: Path) -> dict[str, str]:
    """The metadata Ultralytics' exporter writes into the file (stride, class names, export arguments)."""
    import onnx as onnx_format

    model = onnx_format.load(str(onnx), load_external_data=False)
    inputs = model.graph.input
    sides = [dim.dim_param for dim in inputs[0].type.tensor_type.shape.dim][2:] if len(inputs) == 1 else []
    if len(sides) != 2 or not all(sides):  # a dynamic side has a name, a fixed one a number
        raise ValueError(f"{onnx} is not a detector exported with dynamic sides (yolo export format=onnx dynamic=True)")
    metadata = {prop.key: prop.value for prop in model.metadata_props}
    if "stride" not in metadata:
        raise ValueError(f"{onnx} has no 'stride' in its metadata: not an Ultralytics export")
    return metadata


class OnnxRuntimeSession:
    """The network on ONNX Runtime, with threads that sleep between runs.

    ONNX Runtime's default threads spin on the cores for a while after every run: in the server that is CPU time taken
    from the STN and LPRNet working on the same photo's plates (`git log -- benchmarks/compare_onnx_spinning.py`)."""

    precision = "f32"

    def __init__(self, onnx: Path, threads: int = 0) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        self._input = self.session.get_inputs()[0].name

    def infer(self, pixels: np.ndarray) -> np.ndarray:
        """The network's raw output for letterboxed pixels (1xHxWx3 BGR uint8)."""
        return self.session.run(None, {self._input: rgb_planes(pixels)})[0]


class OnnxDetector:
    """One pass of the detector's ONNX export at a time: a photo in, its boxes, scores and rows out."""

    def __init__(self, onnx: Path, runtime: str, threads: int = 0, precision: str = "f32") -> None:
        """`runtime`: "openvino" or "onnx" (ONNX Runtime); `threads`: 0, one per core; `precision`: OpenVINO's."""
        self.stride = int(onnx_metadata(onnx)["stride"])
        if runtime == "openvino":
            from plates.detection.openvino_session import OpenVINOSession

            self.session: OpenVINOSession | OnnxRuntimeSession = OpenVINOSession(onnx, threads, precision)
        elif runtime == "onnx":
            self.session = OnnxRuntimeSession(onnx, threads)
        else:
            raise ValueError(f"an ONNX detector runs on openvino or onnx, not {runtime!r}")

    @property
    def precision(self) -> str:
        return self.session.precision

    def reserve(self, sizes: tuple[int, ...]) -> None:
        """Compile ahead, where the runtime runs a shape faster so (OpenVINO), the shape of a square frame letterboxed
        at each of `sizes`: the passes that take the same shape every time (DetectorSettings.one_shape_looks)."""
        reserve = getattr(self.session, "reserve", None)  # ONNX Runtime runs every shape alike
        for size in sizes if reserve else ():
            reserve(letterbox(np.zeros((size, size, 3), np.uint8), size, self.stride).shape)

    def look(
        self, image: np.ndarray, imgsz: int, conf: float, iou: float, max_det: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As `look`."""
        return look(self.session, self.stride, image, imgsz, conf, iou, max_det)


def look(
    session, stride: int, image: np.ndarray, imgsz: int, conf: float, iou: float, max_det: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass of `session` (its `infer`: letterboxed pixels in, the network's raw output out, as numpy or a torch
    tensor on any device) at `imgsz`: boxes (x1 y1 x2 y2 in `image`'s pixels), scores and rows (1 or 2, from the
    class) of the plates scored `conf` or more, one box per plate whatever its class (NMS at `iou`), at most
    `max_det`. NMS runs where the output lies."""
    import torch
    from ultralytics.utils import nms, ops

    pixels = letterbox(image, imgsz, stride)
    raw = session.infer(pixels)
    raw = raw if isinstance(raw, torch.Tensor) else torch.from_numpy(np.asarray(raw))
    (found,) = nms.non_max_suppression(raw, conf, iou, agnostic=True, max_det=max_det)
    boxes = ops.scale_boxes(pixels.shape[1:3], found[:, :4], image.shape[:2])
    found = found.cpu()
    return boxes.cpu().numpy(), found[:, 4].numpy(), found[:, 5].numpy().astype(np.int64) + 1
