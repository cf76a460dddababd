"""How a cut is resized to the recognizer's 94x24, measured on the one-line plates read by eye (figures, not
assertions).

Each plate of labels/*.json read with every character certain is cut as served from its own box (SERVED_VARIANTS,
from the photo rescaled to the 1920x1080 frame; a tight crop of rfplates/crops as a photo of its own, the plate
filling it), resized by each interpolation, read by the committed recognizer (or --checkpoint) and voted over its
cuts as served. Printed per split (plates.training.real_plates.split_of: the train split is what the recognizer
learnt from, through whichever resize it was trained with) and per plate width in the frame; then the plates each
resize misreads that `served` (plates.recognition.crops.fit) reads right, and the other way round.

    poetry run python benchmarks/crop_resize.py [--splits val test] [--checkpoint runs/recognizer/last.pt]
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.export import RECOGNIZERS, load_network
from plates.nets import LPRNet, SpatialTransformer
from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH, REFERENCE_FRAME, SERVED_VARIANTS, cut_crops, fit
from plates.recognition.crops import scale_pixels
from plates.recognition.ctc import read_plates, vote
from plates.training.augment import tight_as_photo
from plates.training.by_eye import load_labels
from plates.training.real_plates import SPLITS, real_plates, split_of
from plates.training.trainer import load_checkpoint
from plates.weights import PROJECT_ROOT, find_weights

SHARED = PROJECT_ROOT.parent / "shared" / "data"
WIDTHS = (60, 120, 200, 400)  # bucket edges, px in the frame


def sampled(interpolation: int):
    return lambda cut: cv2.resize(cut, (CROP_WIDTH, CROP_HEIGHT), interpolation=interpolation)


# area: fit as it was at first, averaging every cut wider than the crop, however little
RESIZES = {"served": fit, "area": functools.partial(fit, average_beyond=1.0), "cubic": sampled(cv2.INTER_CUBIC),
           "linear": sampled(cv2.INTER_LINEAR)}


def bucket(width: float) -> int:
    """The widest bucket edge `width` reaches, 0 below them all."""
    return max([0, *(edge for edge in WIDTHS if width >= edge)])


def bucket_name(edge: int) -> str:
    wider = [w for w in WIDTHS if w > edge]
    return f"{edge}-{wider[0]} px" if wider else f">= {edge} px"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", nargs="+", choices=SPLITS, default=["val", "test"])
    parser.add_argument("--checkpoint", type=Path, help="a checkpoint of convert/train_recognizer.py, not the "
                        "committed weights")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.checkpoint:
        stn, lprnet = load_checkpoint(args.checkpoint)
    else:
        files = RECOGNIZERS["plates"]
        stn, lprnet = (load_network(SpatialTransformer, find_weights(files["stn"])),
                       load_network(LPRNet, find_weights(files["lprnet"])))
    stn.eval(), lprnet.eval()
    labels = [label for path in sorted((PROJECT_ROOT / "labels").glob("*.json")) for label in load_labels(path)]
    plates = [plate for plate in real_plates(labels, SHARED, lines=(1,)) if split_of(plate.text) in args.splits]
    right: dict[str, Counter] = {name: Counter() for name in RESIZES}
    seen: Counter = Counter()
    misread: dict[str, dict[str, str]] = {name: {} for name in RESIZES}  # plate -> its reading
    for plate in plates:
        photo = cv2.imread(plate.image)
        if plate.box is None:
            photo, box = tight_as_photo(photo)
        else:
            box = np.asarray(plate.box, np.float32)
        kind = "tight crops" if plate.box is None else "photos"
        width = float(box[2] - box[0]) * REFERENCE_FRAME[0] / photo.shape[1]
        groups = [(split_of(plate.text), kind, bucket(width))]
        seen.update(groups)
        cuts = cut_crops(photo, box[None], SERVED_VARIANTS)
        for name, resize in RESIZES.items():
            batch = np.stack([scale_pixels(resize(cut)).transpose(2, 0, 1) for cut in cuts])
            with torch.no_grad():
                logits = lprnet(stn(torch.from_numpy(np.ascontiguousarray(batch)))).numpy()
            text = vote(read_plates(logits), len(cuts))[0].text
            if text == plate.text:
                right[name].update(groups)
            else:
                misread[name][f"{Path(plate.image).name} {plate.text}, {width:.0f} px"] = text or "(unread)"
    print(f"{len(plates)} one-line plates read by eye, splits {', '.join(args.splits)}; read right by each resize:")
    print(f"  {'split':6} {'kind':12} {'width':10} {'plates':>6} " + " ".join(f"{name:>8}" for name in RESIZES))
    for group in sorted(seen):
        print(f"  {group[0]:6} {group[1]:12} {bucket_name(group[2]):10} {seen[group]:6} "
              + " ".join(f"{right[name][group]:8}" for name in RESIZES))
    print(f"  {'all':30} {sum(seen.values()):6} " + " ".join(f"{sum(right[name].values()):8}" for name in RESIZES))
    served = misread["served"]
    for name in RESIZES:
        if name != "served":
            print(f"\nmisread by {name}, read right served: {len(misread[name].keys() - served.keys())}; the other "
                  f"way round: {len(served.keys() - misread[name].keys())}")
            for plate in sorted(served.keys() - misread[name].keys()):
                print(f"  served reads {plate} as {served[plate]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
