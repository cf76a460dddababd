"""OpenVINO behind the two calls Ultralytics' ONNX backend makes on an ONNX Runtime session, so that the detector's
ONNX file runs on OpenVINO's CPU plugin with Ultralytics' pre- and post-processing unchanged.

Its default precision on a CPU with bfloat16 instructions is bfloat16, faster than f32 and less exact, and f32 on
the others. The `yolo` model's config asks for f32, for bf16, or for that default ("auto"); docs/performance.md
measures them.

OpenVINO's package sends usage telemetry to Google Analytics when it is imported (openvino.tools.ovc's import), and
its converter when it converts, unless the user has opted out with its `opt_in_out` script. The service never
reports on its users: its telemetry client is kept from being imported, so that OpenVINO's stand-in for a missing
one (openvino.tools.ovc.telemetry_stub) takes its place, and the ONNX file is read by the runtime, not converted.
"""

from __future__ import annotations

import functools
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# One photo at a time, as fast as it can be; precision ("f32", "bf16", or "auto": OpenVINO's default) is the caller's.
CONFIG = {"PERFORMANCE_HINT": "LATENCY"}


@functools.lru_cache(maxsize=1)
def _core():
    """The process's one OpenVINO Core. A second Core, once both were freed, left the process to crash on its next
    SIGINT (a Ctrl-C: tests/unit/test_detection.py); one Core is also what OpenVINO asks of an application."""
    sys.modules.setdefault("openvino_telemetry", None)  # an import of a module that is None raises ImportError
    import openvino

    return openvino.Core()


@dataclass(frozen=True)
class _Input:
    name: str


class OpenVINOSession:
    """`run` and `get_inputs` of onnxruntime.InferenceSession, on OpenVINO's CPU plugin, one call at a time."""

    def __init__(self, onnx: Path, threads: int = 0, precision: str = "f32") -> None:
        """`threads`: how many threads OpenVINO runs the model on (0: its default, one per core)."""
        core = _core()
        config = dict(CONFIG) if precision == "auto" else dict(CONFIG, INFERENCE_PRECISION_HINT=precision)
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        self.compiled = core.compile_model(core.read_model(str(onnx)), "CPU", config)
        self._request = self.compiled.create_infer_request()
        self._lock = threading.Lock()  # one infer request: a second caller waits for the first

    @property
    def precision(self) -> str:
        """The precision OpenVINO runs the model at: what was asked for, or what it chose for this CPU."""
        return self.compiled.get_property("INFERENCE_PRECISION_HINT").to_string()

    def get_inputs(self) -> list[_Input]:
        return [_Input(port.get_any_name()) for port in self.compiled.inputs]

    def run(self, output_names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        with self._lock:
            results = self._request.infer(feeds)
            names = output_names or [port.get_any_name() for port in self.compiled.outputs]
            return [np.array(results[self.compiled.output(name)]) for name in names]
