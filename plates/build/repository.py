"""Building the model repository's generated files from the weights (what convert/build_model_repository.py runs).

STN and LPRNet (and the two-line rows' pair, as one network) are traced to TorchScript and checked against their
eager outputs; the detector weights are copied next to the `yolo` adapter and exported to ONNX beside them; the
warm-up photo is written where model_warmup reads it. Only these files are generated: configs and adapters are
committed.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import NamedTuple

import torch

from plates.build.paths import DEFAULT_REPOSITORY
from plates.build.warmup import PHOTO, bytes_element
from plates.build.weights import WEIGHT_FILES, find_weights
from plates.detection.detector import CPU_ONLY, DETECTOR_FILES, INT8_FILE, detector_format
from plates.exceptions import PlatesError
from plates.nets import LPRNet, SpatialTransformer

# What the generated files were built from: each weight file's SHA-256, and the build's settings. A checkout that
# pulls new weights has a repository of the old ones: `plates serve` builds it again rather than serve them.
BUILD_RECORD = "built_from.json"
TRACE_TOLERANCE = 1e-4
# How the build traces the recognizers, recorded with what it built: a repository traced another way (before their
# weights and activations were channels last) reads the same plates, slower, and is built again.
TRACES = "channels-last"
INSTANCE_KINDS = {"auto": "KIND_AUTO", "gpu": "KIND_GPU", "cpu": "KIND_CPU"}
DETECTOR_FILE = DETECTOR_FILES["torch"]
# The recognizer's weight files, by name: this project's own (convert/train_recognizer.py, in weights/), or the
# pretrained reference it was trained from (../shared/weights), which `--recognizer pretrained` still serves so that
# the two can be measured against each other.
RECOGNIZERS = {
    "plates": {"stn": "plates_stn.pt", "lprnet": "plates_lprnet.pt"},
    "pretrained": {"stn": "stn.pth", "lprnet": "lprnet.pth"},
}
# The STN and LPRNet that read a two-line plate's rows (convert/train_recognizer.py --two-line rows), served apart
# from the one-line recognizer as model lprnet_rows: trained on rows, they read car.jpg's soft C as O (docs/scenes.md).
TWO_LINE_RECOGNIZER = {"stn": "plates_rows_stn.pt", "lprnet": "plates_rows_lprnet.pt"}


def copy_sources(target: Path, source: Path = DEFAULT_REPOSITORY) -> Path:
    """A repository's committed files (configs, adapters) copied to `target`, without any file a build generates:
    a repository to build elsewhere."""
    shutil.copytree(
        source, target, ignore=shutil.ignore_patterns("*.pt", "*.onnx", "warmup", BUILD_RECORD, "__pycache__")
    )
    return target


def load_network(network_class: type[torch.nn.Module], checkpoint: Path) -> torch.nn.Module:
    """The network of a weight file (`{"net_state_dict": ..., "architecture": {...}}`, the pretrained checkpoints'
    format; "architecture", where present, holds the class's arguments), in eval mode."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    network = network_class(**state.get("architecture", {}))
    network.load_state_dict(state["net_state_dict"])
    # The STN checkpoint holds 30,668 subnormal weights (below float32's smallest normal, 1.2e-38): they add nothing
    # a float32 sum can hold, and CPUs run convolutions over them about 15 times slower. Zero them.
    with torch.no_grad():
        for parameter in network.parameters():
            parameter[parameter.abs() < torch.finfo(parameter.dtype).tiny] = 0
    return network.eval()


def trace_checked(network: torch.nn.Module, name: str, seed: int = 0) -> torch.jit.ScriptModule:
    """Trace on a batch of 2 and prove the trace matches eager on a batch of 5, so the batch size stays dynamic."""
    generator = torch.Generator().manual_seed(seed)
    # Weights channels last, as LPRNet's activations are: the served network takes them without reordering.
    network = copy.deepcopy(network).to(memory_format=torch.channels_last)
    with torch.no_grad():
        traced = torch.jit.trace(network, torch.randn(2, 3, 24, 94, generator=generator))
        probe = torch.randn(5, 3, 24, 94, generator=generator)
        difference = (traced(probe) - network(probe)).abs().max().item()
    if not difference <= TRACE_TOLERANCE:
        raise PlatesError(f"traced {name} differs from eager by {difference:.3g} (> {TRACE_TOLERANCE})")
    return traced


class ModelFiles(NamedTuple):
    """The networks the build writes into a repository, by what each is."""

    stn: Path
    lprnet: Path
    detector: Path  # the detector's PyTorch weights, the GPU's format
    onnx: Path  # its export, float
    rows: Path  # the two-line rows' STN and LPRNet as one network
    int8: Path  # the export quantized (convert/quantize_detector.py)


def model_files(repository: Path) -> ModelFiles:
    return ModelFiles(
        stn=repository / "stn" / "1" / "model.pt",
        lprnet=repository / "lprnet" / "1" / "model.pt",
        detector=repository / "yolo" / "1" / DETECTOR_FILE,
        onnx=repository / "yolo" / "1" / DETECTOR_FILES["onnx"],
        rows=repository / "lprnet_rows" / "1" / "model.pt",
        int8=repository / "yolo" / "1" / INT8_FILE,
    )


def generated_files(repository: Path) -> list[Path]:
    """Every file the build writes, in the order it returns them."""
    return [*model_files(repository), *warmup_files(repository), repository / BUILD_RECORD]


def warmup_files(repository: Path) -> list[Path]:
    """The model_warmup inputs of the models that take a photo's file: yolo's config names its own; the supervisor
    names plate_recognition's when it reloads it (plates.server.supervisor)."""
    return [repository / model / "warmup" / "photo" for model in ("yolo", "plate_recognition")]


def write_warmup_files(repository: Path) -> list[Path]:
    """The warm-up photo (plates/build/warmup_photo.jpg) as the one BYTES element model_warmup reads from a file."""
    files = warmup_files(repository)
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes_element(PHOTO.read_bytes()))
    return files


def export_detector(weights: Path, format: str = "onnx") -> Path:
    """Export the detector beside `weights` (same name, the format's suffix) and return the exported file.

    Height and width stay dynamic, so each photo is letterboxed to the same stride-padded rectangle as
    for the PyTorch model (780x439 to 608x352, not 608x608): the same boxes, less work on wide photos, and one file
    for every `imgsz` the config lists. `format` is any Ultralytics export format; the build uses ONNX.
    """
    from ultralytics import YOLO

    exported = YOLO(str(weights), task="detect").export(format=format, dynamic=True, device="cpu", verbose=False)
    return Path(exported)


def build_record(repository: Path = DEFAULT_REPOSITORY) -> dict:
    """What `repository` was last built from ({"weights": {name: sha256}, "settings": {...}}); {} where unreadable."""
    try:
        record = json.loads((repository / BUILD_RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def out_of_date(repository: Path = DEFAULT_REPOSITORY) -> str | None:
    """Why `repository`'s generated files are not those of the weights the project names now; None where they are."""
    missing = [path for path in generated_files(repository) if not path.is_file()]
    if missing:
        return f"{missing[0]} is missing"
    record = build_record(repository)
    weights = record.get("weights")
    if not isinstance(weights, dict) or not weights:
        return f"{repository / BUILD_RECORD} names no weights"
    changed = [
        name for name, sha256 in weights.items() if name not in WEIGHT_FILES or WEIGHT_FILES[name].sha256 != sha256
    ]
    if changed:
        return f"{', '.join(changed)} changed since it was built"
    if record.get("traces") != TRACES:
        return f"its recognizers were traced as an older build traced them, not {TRACES}"
    return None


def is_built(repository: Path = DEFAULT_REPOSITORY) -> bool:
    return out_of_date(repository) is None


def rebuild(repository: Path = DEFAULT_REPOSITORY) -> list[Path]:
    """Build `repository` again with the settings it was last built with (the defaults where none are recorded)."""
    settings = build_record(repository).get("settings")
    return build_model_repository(repository, **(settings if isinstance(settings, dict) else {}))


def set_instance_kind(repository: Path, kind: str) -> None:
    """Pin every model's instance group to `kind` (auto, gpu, cpu): the image pins GPU, local runs keep auto."""
    for config in sorted(repository.glob("*/config.pbtxt")):
        text = config.read_text()
        config.write_text(re.sub(r"kind: KIND_[A-Z]+", f"kind: {INSTANCE_KINDS[kind]}", text))


def set_parameter(config: Path, key: str, value: str) -> None:
    """Set the string parameter `key` of the model config `config` to `value`."""
    text, count = re.subn(
        rf'(key: "{re.escape(key)}", value: \{{ string_value: )"[^"]*"', rf'\g<1>"{value}"', config.read_text()
    )
    if count != 1:
        raise PlatesError(f"{config}: no parameter '{key}' to set")
    config.write_text(text)


def set_detector_format(repository: Path, format: str) -> None:
    """Set the `yolo` model's parameter `format` (openvino, onnx, torch): the GPU image runs the detector in PyTorch,
    whose file is the float weights, so its `precision` becomes "auto" (f32 there)."""
    config = repository / "yolo" / "config.pbtxt"
    set_parameter(config, "format", detector_format(format))
    if format not in CPU_ONLY:
        set_parameter(config, "precision", "auto")


def set_lprnet_frames(repository: Path, frames: int) -> None:
    """Set `lprnet`'s output dims to [classes, frames]: 18 for the reference's LPRNet, 39 for a wide one."""
    config = repository / "lprnet" / "config.pbtxt"
    text, count = re.subn(
        r'(name: "output__0", data_type: TYPE_FP32, dims: \[ \d+, )\d+( \])', rf"\g<1>{frames}\2", config.read_text()
    )
    if count != 1:
        raise PlatesError(f"{config}: no output__0 dims to set")
    config.write_text(text)


def write_recognizer(repository: Path, stn: torch.nn.Module, lprnet: torch.nn.Module, name: str = "") -> list[Path]:
    """Trace STN and LPRNet into the repository's stn and lprnet models, and set lprnet's output to its frames."""
    files = model_files(repository)
    stn_file, lprnet_file = files.stn, files.lprnet
    for network, target, what in ((stn, stn_file, "stn"), (lprnet, lprnet_file, "lprnet")):
        target.parent.mkdir(parents=True, exist_ok=True)
        trace_checked(network, f"{name} {what}".strip()).save(str(target))
    with torch.no_grad():
        set_lprnet_frames(repository, lprnet(torch.zeros(1, 3, 24, 94)).shape[-1])
    return [stn_file, lprnet_file]


def write_two_line_recognizer(repository: Path, stn: torch.nn.Module, lprnet: torch.nn.Module) -> Path:
    """Trace the rows' STN and LPRNet as one network into the repository's lprnet_rows model: one call a photo
    where it has two-line plates, not two."""
    target = model_files(repository).rows
    target.parent.mkdir(parents=True, exist_ok=True)
    trace_checked(torch.nn.Sequential(stn, lprnet).eval(), "two-line rows' STN and LPRNet").save(str(target))
    return target


def build_model_repository(
    repository: Path = DEFAULT_REPOSITORY,
    weights_dir: Path | None = None,
    instance_kind: str = "auto",
    recognizer: str = "plates",
    cpu_exports: bool = True,
) -> list[Path]:
    """Write the generated files into `repository` and return their paths; `recognizer` names the STN and LPRNet
    weights (RECOGNIZERS). Without `cpu_exports`, the detector's CPU files (its ONNX export, which takes Ultralytics'
    exporter, and the INT8 file) are left out and it runs in PyTorch, as a GPU build runs it: for a machine that
    serves on a GPU and has no exporter (scripts/gpu-check.sh)."""
    names = RECOGNIZERS[recognizer]
    rows = TWO_LINE_RECOGNIZER
    weight_files = [names["stn"], names["lprnet"], rows["stn"], rows["lprnet"], DETECTOR_FILE]
    sources = {name: find_weights(name, weights_dir) for name in weight_files + ([INT8_FILE] if cpu_exports else [])}
    written = write_recognizer(
        repository,
        load_network(SpatialTransformer, sources[names["stn"]]),
        load_network(LPRNet, sources[names["lprnet"]]),
        recognizer,
    )
    files = model_files(repository)
    files.detector.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sources[DETECTOR_FILE], files.detector)
    if cpu_exports:
        export_detector(files.detector)
        shutil.copyfile(sources[INT8_FILE], files.int8)
    rows_file = write_two_line_recognizer(
        repository,
        load_network(SpatialTransformer, sources[rows["stn"]]),
        load_network(LPRNet, sources[rows["lprnet"]]),
    )
    warmup = write_warmup_files(repository)
    set_instance_kind(repository, instance_kind)
    if instance_kind == "gpu" or not cpu_exports:
        set_detector_format(repository, "torch")
    record = repository / BUILD_RECORD
    settings = {
        "weights_dir": str(weights_dir) if weights_dir else None,
        "instance_kind": instance_kind,
        "recognizer": recognizer,
        "cpu_exports": cpu_exports,
    }
    # find_weights checked each file against the SHA-256 the project names for it
    record.write_text(
        json.dumps(
            {"weights": {name: WEIGHT_FILES[name].sha256 for name in sources}, "settings": settings, "traces": TRACES},
            indent=2,
        )
        + "\n"
    )
    networks = [files.detector, files.onnx, rows_file, files.int8] if cpu_exports else [files.detector, rows_file]
    return [*written, *networks, *warmup, record]
