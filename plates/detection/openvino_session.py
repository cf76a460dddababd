"""The detector's ONNX file on OpenVINO's CPU plugin (plates.detection.onnx_detector): a letterboxed photo's BGR bytes
in, the network's raw output out. OpenVINO turns the bytes into the network's input (RGB planes in [0, 1]) inside the
compiled graph, where numpy took another pass over the photo. Compiled for any input shape, and again for each of the
few shapes it sees most (FIXED_SHAPES), which run faster so.

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
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import openvino

# One photo at a time, as fast as it can be; precision ("f32", "bf16", or "auto": OpenVINO's default) is the caller's.
CONFIG = {"PERFORMANCE_HINT": "LATENCY"}
# The detector's file takes any height and width, and Ultralytics letterboxes a photo to a few shapes only (608 on the
# longer side, the other a multiple of 32). Compiled for one shape, OpenVINO ran it in 0.91 to 0.98 of the time the
# model for any shape took, with the same outputs, at each of the 7 shapes e2e.json's photos take (`git log --
# benchmarks/openvino_fixed_shapes.py`); each costs about 0.45 s to compile in f32 and 1.1 s in INT8, and 55 MB to hold.
# So a shape gets a model of its own from its third photo on, for up to FIXED_SHAPES shapes: a camera's frames are one
# shape, and photos mostly a few (416x608 and 480x608 were 65 of e2e.json's 75). It is compiled on a thread of its own
# while the photos go on running on the model for any shape: on the request's path, a second of INT8 compiling timed out
# the gateway's health probe (1 s at its tests' --health-interval 1). Rarer shapes, and any past
# those, run on the model for any shape, so that a stream of varied photos never makes it compile again and again.
FIXED_SHAPES = 4
FIXED_ON_SIGHTING = 3


@functools.lru_cache(maxsize=1)
def _core():
    """The process's one OpenVINO Core. A second Core, once both were freed, left the process to crash on its next
    SIGINT (a Ctrl-C: tests/integration/test_detection.py); one Core is also what OpenVINO asks of an application."""
    sys.modules.setdefault("openvino_telemetry", None)  # an import of a module that is None raises ImportError
    import openvino

    return openvino.Core()


def taking_bgr_bytes(model: openvino.Model) -> openvino.Model:
    """`model` (input 1x3xHxW RGB float in [0, 1]) taking 1xHxWx3 BGR uint8, as a letterboxed photo is."""
    import openvino
    from openvino.preprocess import ColorFormat, PrePostProcessor

    steps = PrePostProcessor(model)
    steps.input().tensor().set_element_type(openvino.Type.u8).set_layout(openvino.Layout("NHWC")).set_color_format(
        ColorFormat.BGR
    )
    steps.input().model().set_layout(openvino.Layout("NCHW"))
    steps.input().preprocess().convert_element_type(openvino.Type.f32).convert_color(ColorFormat.RGB).scale(255.0)
    return steps.build()


class OpenVINOSession:
    """The detector's network on OpenVINO's CPU plugin, one call at a time."""

    def __init__(self, onnx: Path, threads: int = 0, precision: str = "f32") -> None:
        """`threads`: how many threads OpenVINO runs the model on (0: its default, one per core)."""
        core = _core()
        config = dict(CONFIG) if precision == "auto" else dict(CONFIG, INFERENCE_PRECISION_HINT=precision)
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        self._model = taking_bgr_bytes(core.read_model(str(onnx)))
        self._config = config
        self.compiled = core.compile_model(self._model, "CPU", config)  # for any shape
        self._any_shape = self.compiled.create_infer_request()
        self.fixed: dict[tuple[int, ...], openvino.InferRequest] = {}  # input shape -> that of a model compiled for it
        self._compiling: dict[tuple[int, ...], threading.Thread] = {}  # shapes whose model is being compiled
        self._sightings: Counter[tuple[int, ...]] = Counter()
        self._reserved: set[tuple[int, ...]] = set()  # shapes compiled whatever FIXED_SHAPES (reserve)
        self._lock = threading.Lock()  # one infer request at a time: a second caller waits for the first

    @property
    def precision(self) -> str:
        """The precision OpenVINO runs the model at: what was asked for, or what it chose for this CPU."""
        return self.compiled.get_property("INFERENCE_PRECISION_HINT").to_string()

    def infer(self, pixels: np.ndarray) -> np.ndarray:
        """The network's raw output for letterboxed pixels (1xHxWx3 BGR uint8)."""
        with self._lock:
            return np.array(self._request_for(pixels.shape).infer([pixels])[0])

    def reserve(self, shape: tuple[int, ...]) -> None:
        """Compile a model of its own for `shape` now, on a thread, beside FIXED_SHAPES photo shapes: for a pass the
        detector makes at one shape every time (a close look's window), which would otherwise take the place of a
        photo shape that comes first three times, and leave the photos of a commoner shape to come later on the model
        for any shape: 39 of the test plates' photos, with the close look's 256x256 among the first four."""
        with self._lock:
            self._reserved.add(shape)
            if shape not in self.fixed and shape not in self._compiling:
                self._start_compiling(shape)

    def wait_compiled(self) -> None:
        """Return once the shapes being compiled have their models."""
        for thread in list(self._compiling.values()):
            thread.join()

    def _request_for(self, shape: tuple[int, ...]) -> openvino.InferRequest:
        """The infer request of the model compiled for `shape` where it is ready; else that of the model for any
        shape, and on `shape`'s FIXED_ON_SIGHTING-th photo, while fewer than FIXED_SHAPES are compiled or being
        compiled, its own model's compiling starts on a thread."""
        request = self.fixed.get(shape)
        if request is not None:
            return request
        self._sightings[shape] += 1
        wanted = self._sightings[shape] >= FIXED_ON_SIGHTING and shape not in self._compiling
        photo_shapes = {*self.fixed, *self._compiling} - self._reserved
        if wanted and len(photo_shapes) < FIXED_SHAPES:
            self._start_compiling(shape)
        return self._any_shape

    def _start_compiling(self, shape: tuple[int, ...]) -> None:
        # Not a daemon: a process that exits while OpenVINO compiles on a daemon thread aborts (std::terminate).
        thread = threading.Thread(target=self._compile, args=(shape,), name=f"compile {shape}")
        self._compiling[shape] = thread  # where compiling fails it stays: that shape keeps the any-shape model
        thread.start()

    def _compile(self, shape: tuple[int, ...]) -> None:
        model = self._model.clone()
        model.reshape(list(shape))
        self.fixed[shape] = _core().compile_model(model, "CPU", self._config).create_infer_request()
        del self._compiling[shape]
