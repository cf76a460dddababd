"""The detector's PyTorch weights (the GPU's format, `torch`) run on a device as the ONNX export is run on the CPU
(plates.detection.onnx_detector): Ultralytics' letterbox, non-maximum suppression and box scaling, called directly
around the network, not its predictor. Optionally each letterboxed shape's forward pass is recorded once as a CUDA graph
and replayed: one launch for the network's ~300 kernels.

On a GPU the network's work is small and its launches are not: docs/gpu.md measures where the detector's time goes
(benchmarks/detector_stages.py) and what the graphs save served.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from plates.detection.onnx_detector import look

# A photo's letterboxed shape is one of a few (608 on its longer side, the other a multiple of the stride): a camera
# sends one. Each graph holds its own activations' memory, so past this many shapes the others run eagerly.
MAX_GRAPHS = 8


@dataclass
class Graph:
    graph: torch.cuda.CUDAGraph
    input: torch.Tensor
    output: torch.Tensor
    # What the recorded kernels read that the graph does not own: Ultralytics' head makes its anchors and strides
    # for a shape when it first sees it, and drops them for another shape's. Freed, a replay read memory the next
    # recording had given back to the driver ("an illegal memory access", served on an H200); made inside the graph
    # instead, they take a copy to the host that stops the recording. Held here, they live as long as it.
    held: tuple[torch.Tensor, ...]


class TorchSession:
    """The network on `device`: a letterboxed photo (1xHxWx3 BGR uint8) in, its raw output, on the device, out."""

    precision = "f32"

    def __init__(self, weights: Path, device: torch.device, cuda_graphs: bool = False) -> None:
        from ultralytics import YOLO

        # Fused as Ultralytics' predictor fuses it: each convolution with its batch norm.
        self.network = YOLO(str(weights), task="detect").model.fuse(verbose=False).eval().to(device)
        self.stride = int(self.network.stride.max())
        self.device = device
        self.cuda_graphs = cuda_graphs and device.type == "cuda"
        self.graphs: dict[tuple[int, ...], Graph] = {}

    def planes(self, pixels: np.ndarray) -> torch.Tensor:
        """Letterboxed pixels as the network's input on the device: 1x3xHxW RGB float32 in [0, 1]. The bytes cross to
        the device, a quarter of the floats made from them there."""
        moved = torch.from_numpy(pixels).to(self.device)
        return moved.flip(-1).permute(0, 3, 1, 2).float().div_(255).contiguous()

    def infer(self, pixels: np.ndarray) -> torch.Tensor:
        # Not inference_mode: NMS writes into the output, which inference tensors refuse outside that mode.
        with torch.no_grad():
            planes = self.planes(pixels)
            shape = tuple(planes.shape)
            graph = self.graphs.get(shape)
            if graph is None and self.cuda_graphs and len(self.graphs) < MAX_GRAPHS:
                graph = self.graphs[shape] = self.record(planes)
            if graph is None:
                return self.network(planes)[0]
            graph.input.copy_(planes)
            graph.graph.replay()
            # The next replay writes the same memory: the caller keeps its own copy.
            return graph.output.clone()

    def record(self, planes: torch.Tensor) -> Graph:
        """The forward pass at `planes`' shape, recorded as a CUDA graph after warm-up runs on a side stream, as
        torch.cuda.graph asks."""
        static = planes.clone()
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            for _ in range(3):
                self.network(static)
        torch.cuda.current_stream(self.device).wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        # thread_local: the Python backend's own threads may call CUDA while this one records.
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            output = self.network(static)[0]
        head = self.network.model[-1]
        return Graph(graph, static, output, (head.anchors, head.strides))


class TorchDetector:
    """One pass of the detector's PyTorch weights at a time: a photo in, its boxes, scores and rows out."""

    def __init__(self, weights: Path, device: torch.device, cuda_graphs: bool = False) -> None:
        self.session = TorchSession(weights, device, cuda_graphs)
        self.precision = self.session.precision

    def look(
        self, image: np.ndarray, imgsz: int, conf: float, iou: float, max_det: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As plates.detection.onnx_detector.look."""
        return look(self.session, self.session.stride, image, imgsz, conf, iou, max_det)
