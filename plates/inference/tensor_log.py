"""Where the tensors that cross a model's boundary lie, host or GPU memory: counted by model, way and tensor.

On a GPU every tensor between yolo, stn, lprnet and plate_recognition is meant to stay there: DLPack out of one model,
DLPack into the next, no copy to the host. This shows it rather than assumes it. Where $PLATES_TENSOR_LOG names a
folder, each model's process counts every tensor it receives, sends or decodes, by where Triton or torch says it lies
(`is_cpu()` of a Triton tensor, the device of a torch one), and writes its counts there as JSON when its model is
unloaded: the server's stop writes them all (scripts/gpu-check.sh reads them). Unset, a count costs one comparison.

The ways: "received" (a request's input), "sent" (a response's output), "decoded" (a photo's file made pixels, by
nvJPEG where they lie on the GPU), and "to MODEL" and "from MODEL" (the inputs and outputs of a call to MODEL).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG_VARIABLE = "PLATES_TENSOR_LOG"
CPU, GPU, EMPTY = "cpu", "gpu", "empty"


def memory_of(tensor: Any) -> str:
    """CPU or GPU: where a Triton tensor (its methods shape and is_cpu) or a torch tensor (its properties) lies;
    anything else, a numpy array, on the host. EMPTY for a tensor of no element, which holds no memory anywhere."""
    shape = tensor.shape() if callable(getattr(tensor, "shape", None)) else getattr(tensor, "shape", ())
    if 0 in tuple(shape):
        return EMPTY
    is_cpu = getattr(tensor, "is_cpu", True)
    return CPU if (is_cpu() if callable(is_cpu) else is_cpu) else GPU


@dataclass(frozen=True)
class Crossing:
    model: str
    way: str
    tensor: str
    memory: str
    count: int


class TensorLog:
    """One model process's counts, kept in memory and written once, at unload."""

    def __init__(self, folder: Path | None, model: str) -> None:
        self.folder, self.model = folder, model
        self.counts: Counter[tuple[str, str, str]] = Counter()

    @classmethod
    def from_environment(cls, model: str) -> TensorLog:
        folder = os.environ.get(LOG_VARIABLE)
        return cls(Path(folder) if folder else None, model)

    def count(self, way: str, tensor: Any, name: str | None = None) -> None:
        """One crossing of `tensor`, a Triton tensor (named by its name()) or a torch one named `name`."""
        if self.folder is not None:
            self.counts[way, tensor.name() if name is None else name, memory_of(tensor)] += 1

    def count_all(self, way: str, tensors: Iterable[Any]) -> None:
        for tensor in tensors:
            self.count(way, tensor)

    def write(self) -> Path | None:
        """The counts as <folder>/<model>.<pid>.json; None where no folder is set."""
        if self.folder is None:
            return None
        rows = [
            {"way": way, "tensor": name, "memory": memory, "count": count}
            for (way, name, memory), count in sorted(self.counts.items())
        ]
        path = self.folder / f"{self.model}.{os.getpid()}.json"
        path.write_text(json.dumps({"model": self.model, "crossings": rows}, indent=1) + "\n")
        return path


def read_log(folder: Path) -> list[Crossing]:
    """Every process's counts in `folder`, summed by model, way, tensor and memory."""
    totals: Counter[tuple[str, str, str, str]] = Counter()
    for path in sorted(Path(folder).glob("*.json")):
        written = json.loads(path.read_text())
        for row in written["crossings"]:
            totals[written["model"], row["way"], row["tensor"], row["memory"]] += row["count"]
    return [Crossing(*key, count) for key, count in sorted(totals.items())]
