"""Store LPRNet logits of real cuts, and the decoder's readings of them: the fixture tests/unit/test_ctc.py checks
plates.recognition.ctc against, so that a faster decoder must read exactly what the one of the time read.

Runs the project's own pieces in one process: the ONNX detector (model_repository/yolo/1) on car.jpg and the
e2e photos, each box cut the DEFAULT_VARIANTS ways, then the served STN and LPRNet (TorchScript). Keeps every cut
of car.jpg, the cuts of e2e photos whose two likeliest texts are the closest calls, and an even spread of the
rest, as float16 (tests/unit/data/ctc_logits.npy); the readings (tests/unit/data/ctc_readings.json) are of those
float16 logits, as the test feeds them. The committed fixture's readings are those of the decoder before it was
sped up (numpy's scalar maths, per-frame argsort).

    poetry run python convert/store_ctc_logits.py [--close-calls 50] [--spread 40]
    poetry run python convert/store_ctc_logits.py --all /tmp/dev_logits.npz

--all instead writes the float32 logits of every cut of car.jpg, the e2e photos and the val photos (each photo
once), with each cut's photo: what a decoder compared on the dev data reads (the beam-search decoders were compared
so; docs/performance.md, "Tried and not kept").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT, shared_dir
from plates.detection.detector import PlateDetector
from plates.photos.files import read_image
from plates.recognition.crops import DEFAULT_VARIANTS, prepare_crops
from plates.recognition.ctc import read_plates

DATA = shared_dir() / "data"
FIXTURE = PROJECT_ROOT / "tests" / "unit" / "data"


def photos(with_val: bool) -> list[Path]:
    """car.jpg, the e2e photos, and with `with_val` the val photos the e2e list lacks."""
    found = [DATA / "samples" / "car.jpg"]
    found += [DATA / photo["image"] for photo in json.loads((DATA / "e2e.json").read_text())]
    if with_val:
        found += sorted(set((DATA / "detect" / "images" / "val").glob("*.jpg")) - set(found))
    return found


def cut_logits(paths: list[Path]) -> tuple[np.ndarray, list[str]]:
    """LPRNet's logits [cuts, classes, time] of every cut of every detected plate, and each cut's photo."""
    detector = PlateDetector(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx")
    stn = torch.jit.load(str(DEFAULT_REPOSITORY / "stn" / "1" / "model.pt"))
    lprnet = torch.jit.load(str(DEFAULT_REPOSITORY / "lprnet" / "1" / "model.pt"))
    logits, names = [], []
    with torch.inference_mode():
        for path in paths:
            image = read_image(path)
            crops = prepare_crops(image, detector.detect(image).boxes, DEFAULT_VARIANTS)
            if len(crops):
                logits.append(lprnet(stn(torch.from_numpy(crops))).numpy())
                names += [str(path.relative_to(DATA))] * len(crops)
    return np.concatenate(logits), names


def closeness(candidates: tuple[tuple[str, float], ...]) -> float:
    """How near the runner-up comes to the likeliest text: 1 for a tie, 0 where there is no runner-up."""
    return candidates[1][1] / candidates[0][1] if len(candidates) > 1 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--close-calls", type=int, default=50, help="e2e cuts kept for their closest top two")
    parser.add_argument("--spread", type=int, default=40, help="other e2e cuts kept, evenly spaced")
    parser.add_argument("--all", type=Path, help="write every dev cut's float32 logits here instead")
    args = parser.parse_args()
    logits, names = cut_logits(photos(with_val=args.all is not None))
    if args.all:
        np.savez_compressed(args.all, logits=logits, photos=np.array(names))
        print(f"{len(names)} cuts of {len(set(names))} photos -> {args.all}")
        return
    logits = logits.astype(np.float16)
    readings = read_plates(logits)
    car = [i for i, name in enumerate(names) if name == "samples/car.jpg"]
    others = sorted((i for i in range(len(names)) if i not in car), key=lambda i: -closeness(readings[i].candidates))
    close, rest = others[: args.close_calls], others[args.close_calls :]
    spread = [rest[i] for i in np.unique(np.linspace(0, len(rest) - 1, args.spread).round().astype(int))]
    kept = sorted(car + close + spread)
    FIXTURE.mkdir(parents=True, exist_ok=True)
    np.save(FIXTURE / "ctc_logits.npy", logits[kept])
    cuts = [{"photo": names[i], "candidates": readings[i].candidates} for i in kept]
    (FIXTURE / "ctc_readings.json").write_text("[\n" + ",\n".join(json.dumps(cut) for cut in cuts) + "\n]\n")
    unread = sum(not readings[i].candidates for i in kept)
    print(f"kept {len(kept)} of {len(names)} cuts: {len(car)} of car.jpg, {len(close)} close calls, {unread} unread")
    print(f"closest calls: {', '.join(f'{closeness(readings[i].candidates):.4f}' for i in close[:5])}")


if __name__ == "__main__":
    main()
