"""The served pipeline in one process: the model repository's models, configs and code, called directly.

What `plates bench --in-process` measures the server against: plate_recognition's own `recognize` with the same
settings, the yolo model's DetectorModel and the TorchScript files the PyTorch backend runs, so that the difference
is what serving adds (HTTP, Triton's queues, the Python backend's calls between processes). It also says where a
photo's time goes, stage by stage.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from plates.inference.detector_model import DetectorModel
from plates.inference.model_config import ModelConfig, read_config
from plates.inference.photo_input import Photo, photo_input, photo_pixels
from plates.inference.pipeline import Plates, RecognitionSettings, recognize
from plates.inference.triton_adapter import set_intra_op_threads

# Where one photo's time goes, in the order it is spent; "reading" is the CTC search and voting, and whatever else
# plate_recognition does between its calls.
STAGES = ("decoding", "detector", "crops", "stn", "lprnet", "lprnet_rows", "reading")


class StageTimer:
    """Seconds by stage. On a GPU a stage ends when its kernels have: torch returns before they run."""

    def __init__(self, device: torch.device) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.device = device

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.seconds[stage] += time.perf_counter() - start


def config_device(config: ModelConfig) -> torch.device:
    """The device Triton gives a model's first instance: KIND_GPU the first GPU, KIND_CPU the CPU, KIND_AUTO (or no
    instance group) the first GPU where there is one."""
    groups = config.raw.get("instance_group") or [{}]
    kind = groups[0].get("kind", "KIND_AUTO")
    if kind == "KIND_GPU" or (kind == "KIND_AUTO" and torch.cuda.is_available()):
        return torch.device("cuda:0")
    return torch.device("cpu")


class InProcessPipeline:
    """On the device the repository's yolo config puts its instance, as Triton would."""

    def __init__(self, repository: Path) -> None:
        self.settings = RecognitionSettings.from_config(read_config(repository / "plate_recognition" / "config.pbtxt"))
        yolo = repository / "yolo"
        yolo_config = read_config(yolo / "config.pbtxt")
        self.device = config_device(yolo_config)
        self.detector = DetectorModel(yolo_config, yolo / "1", self.device)
        self.networks = {
            name: torch.jit.load(str(repository / name / "1" / "model.pt"), map_location=self.device).eval()
            for name in ("stn", "lprnet", "lprnet_rows")
        }
        set_intra_op_threads(read_config(repository / "stn" / "config.pbtxt"))

    def recognize(self, data: bytes) -> tuple[Plates, dict[str, float]]:
        """The plates of a photo's file, as plate_recognition answers its `image_bytes`, and the seconds each stage
        took (STAGES)."""
        timer = StageTimer(self.device)
        start = time.perf_counter()

        def infer(model: str, inputs: Photo, outputs: list[str]) -> dict[str, torch.Tensor]:
            if model == "yolo":
                with timer("decoding"):
                    image = photo_pixels(inputs, self.device)
                with timer("detector"):
                    detected = self.detector.detect(image)
                with timer("crops"):
                    return self.detector.cut(*detected)
            with timer(model), torch.inference_mode():
                return {"output__0": self.networks[model](inputs["input__0"])}

        plates = recognize(photo_input(None, np.array([data], dtype=np.object_)), infer, self.settings)
        seconds = {stage: timer.seconds[stage] for stage in STAGES[:-1]}
        seconds["reading"] = time.perf_counter() - start - sum(seconds.values())
        return plates, seconds
