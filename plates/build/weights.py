"""Finding the weight files and proving they are the ones we expect.

Search order: `$PLATES_WEIGHTS_DIR`, then the project's `weights/`, then the shared folder's `weights/`
($PLATES_SHARED_DIR, else ../shared beside the project).
Nothing is ever downloaded: a missing file is an error that says where to get it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.exceptions import WeightsError


@dataclass(frozen=True)
class WeightFile:
    name: str
    sha256: str
    source: str  # where a user gets it


_RECOGNIZER_SOURCE = "https://github.com/EgShes/one_task_multiple_infras/raw/master/nn/nn/weights/"
WEIGHT_FILES = {
    w.name: w
    for w in (
        WeightFile(
            "lprnet.pth",
            "369ff38f6afa894628e6675f448fa0ff87d532fe1f099e6fc3b9a0fd2a8570b4",
            _RECOGNIZER_SOURCE + "lprnet.pth",
        ),
        WeightFile(
            "stn.pth",
            "4b42329b16c1c2a1c90444cb64dce04f6f3c5e32fa97fa07c4eaa9dec52a0f01",
            _RECOGNIZER_SOURCE + "stn.pth",
        ),
        WeightFile(
            "plates_stn.pt",
            "63fa22c6e33f58d6ebca249cb1fc3deb9b0db050afe004c4a87d176b5d399858",
            "this repository's weights/ (train it again with convert/train_recognizer.py)",
        ),
        WeightFile(
            "plates_lprnet.pt",
            "e86606ec831dd4febc3edf86fce1cef2df719db2127a0d364a644504c766c49a",
            "this repository's weights/ (train it again with convert/train_recognizer.py)",
        ),
        WeightFile(
            "plates_rows_stn.pt",
            "da406ce7f8b8a0b29a9aa9dbcbc4ca20f39322babf668e78199da811c3d7eae0",
            "this repository's weights/ (convert/train_recognizer.py --two-line rows --two-line-only)",
        ),
        WeightFile(
            "plates_rows_lprnet.pt",
            "a2cc224a6542a68fa6405888627499900b46b6c730782ec20179648426980c4d",
            "this repository's weights/ (convert/train_recognizer.py --two-line rows --two-line-only)",
        ),
        WeightFile(
            "plate_detector.pt",
            "d1845fe1b514c2583872442cf50a2ab9dd376a1594f2c1cd3324c650164f66ba",
            "this repository's weights/ (train it again with convert/train_detector.py)",
        ),
        WeightFile(
            "plate_detector.int8.onnx",
            "62ddb46cd199116ecbbbd67582b2b8891891ba9d60a2ba065ad5df3915d7df63",
            "this repository's weights/ (made from plate_detector.pt by convert/quantize_detector.py)",
        ),
    )
}


def search_path(weights_dir: str | Path | None = None) -> list[Path]:
    """Where weights are looked for, first match wins: an explicit folder, or the environment and defaults."""
    if weights_dir is not None:
        return [Path(weights_dir)]
    places = [PROJECT_ROOT / "weights", shared_dir() / "weights"]
    env = os.environ.get("PLATES_WEIGHTS_DIR")
    return ([Path(env)] if env else []) + places


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def find_weights(name: str, weights_dir: str | Path | None = None) -> Path:
    """The verified path of weight file `name`; WeightsError naming the file, the places and the source if not."""
    expected = WEIGHT_FILES[name]
    places = search_path(weights_dir)
    for place in places:
        candidate = place / name
        if candidate.is_file():
            actual = sha256_of(candidate)
            if actual != expected.sha256:
                raise WeightsError(
                    f"{candidate} has SHA-256 {actual}, expected {expected.sha256}: "
                    f"replace it with the file from {expected.source}"
                )
            return candidate
    looked = ", ".join(str(p) for p in places)
    raise WeightsError(
        f"weight file {name} not found; looked in: {looked}. "
        f"Download it from {expected.source} into one of them, or set PLATES_WEIGHTS_DIR"
    )
