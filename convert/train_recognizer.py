"""Train the project's recognizer (STN + LPRNet) on synthetic plates and real training crops, reproducibly.

    python convert/train_recognizer.py sheet                 # docs/recognizer.sheet.png: synthetic beside real crops
    python convert/train_recognizer.py train                 # ~1 h on 2 cores; resumes from runs/recognizer/last.pt
    python convert/train_recognizer.py validate [--pretrained]   # the validation sets, read by last.pt or the reference
    python convert/train_recognizer.py export                # weights/plates_stn.pt, weights/plates_lprnet.pt

Data: `--detect` (../shared/data/detect) train split less every photo `--e2e` lists; never its val split. Its plates
have boxes but no text: the pretrained recognizer reads them with all 15 cuts, and those it is sure of (confidence at
least --min-label-confidence) are kept. One photo in five is held out as real validation. Synthetic plates are
rendered with ../shared/fonts/GOST-R-50577-93.ttf. Everything is seeded; generated sets are cached in --out.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.export import load_network
from plates.nets import LPRNet, SpatialTransformer
from plates.training.augment import ENLARGE_SHARE
from plates.training.dataset import CropSet, background_photos, real_set, synthetic_set
from plates.training.real_plates import PseudoLabeller, label_plates, load_plates, save_plates
from plates.training.trainer import TrainSettings, train, validate
from plates.weights import PROJECT_ROOT, find_weights, sha256_of

SHARED = PROJECT_ROOT.parent / "shared" / "data"
OUTPUTS = {"stn": PROJECT_ROOT / "weights" / "plates_stn.pt", "lprnet": PROJECT_ROOT / "weights" / "plates_lprnet.pt"}


def pretrained() -> tuple[torch.nn.Module, torch.nn.Module]:
    return (load_network(SpatialTransformer(), find_weights("stn.pth")),
            load_network(LPRNet(), find_weights("lprnet.pth")))


def is_validation_photo(image: str) -> bool:
    """One training photo in five, by a hash of its name: the same split on every machine and run."""
    return hashlib.sha256(Path(image).name.encode()).digest()[0] % 5 == 0


def cached(path: Path, make) -> CropSet:
    if path.is_file():
        return CropSet.load(path)
    data = make()
    data.save(path)
    print(f"wrote {path} ({len(data)} crops)", flush=True)
    return data


def datasets(args) -> tuple[CropSet, CropSet, dict[str, CropSet]]:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    labels = out / "pseudo_labels.json"
    if not labels.is_file():
        print("reading the training plates with the pretrained recognizer", flush=True)
        save_plates(label_plates(args.detect, args.e2e, PseudoLabeller(*pretrained())), labels)
    plates = [p for p in load_plates(labels) if p.text and p.confidence >= args.min_label_confidence]
    train_plates = [p for p in plates if not is_validation_photo(p.image)]
    val_plates = [p for p in plates if is_validation_photo(p.image)]
    print(f"real plates: {len(train_plates)} to train on, {len(val_plates)} to validate", flush=True)
    backgrounds = background_photos(args.detect, args.e2e)
    real = cached(out / "real.npz", lambda: real_set(train_plates, args.real_cuts, args.seed))
    synthetic = cached(out / "synthetic.npz", lambda: synthetic_set(args.synthetic, args.seed, backgrounds,
                                                                      enlarge_share=args.enlarge_share))
    validations = {
        "real-val": cached(out / "real_val.npz", lambda: real_set(val_plates, 1, args.seed + 1, augment=False)),
        "real-val-aug": cached(out / "real_val_aug.npz", lambda: real_set(val_plates, 4, args.seed + 2)),
        "synthetic-val": cached(out / "synthetic_val.npz", lambda: synthetic_set(2000, args.seed + 1, backgrounds)),
    }
    return real, synthetic, validations


def sheet(args) -> int:
    """Synthetic crops beside real ones, as the recognizer sees them (94x24, shown 2x)."""
    real, synthetic, _ = datasets(args)
    rng = np.random.default_rng(args.seed)
    def grid(images: np.ndarray, rows: int, cols: int) -> np.ndarray:
        picked = images[rng.choice(len(images), rows * cols, replace=False)]
        return np.concatenate([np.concatenate(list(picked[r * cols : (r + 1) * cols]), 1) for r in range(rows)])
    gap = np.full((12 * 24, 8, 3), 255, np.uint8)
    picture = np.concatenate([grid(synthetic.images, 12, 4), gap, grid(real.images, 12, 4)], 1)
    picture = cv2.resize(picture, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)
    cv2.imwrite(str(args.sheet), picture)
    print(f"wrote {args.sheet}: synthetic crops (left) beside real training crops (right)")
    return 0


def run_training(args) -> int:
    torch.set_num_threads(args.threads)
    real, synthetic, validations = datasets(args)
    if args.init == "pretrained":
        stn, lprnet = pretrained()
    else:
        stn, lprnet = SpatialTransformer(), LPRNet()
        if args.init != "scratch":  # a checkpoint of an earlier run: this one goes on from its networks
            state = torch.load(args.init, map_location="cpu", weights_only=False)
            stn.load_state_dict(state["stn"]), lprnet.load_state_dict(state["lprnet"])
    settings = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                             synthetic_per_epoch=args.synthetic_per_epoch, seed=args.seed)
    train(stn, lprnet, real, synthetic, validations, args.out, settings, log=lambda line: print(line, flush=True))
    return 0


def run_validation(args) -> int:
    torch.set_num_threads(args.threads)
    _, _, validations = datasets(args)
    if args.pretrained:
        stn, lprnet = pretrained()
    else:
        state = torch.load(args.out / f"{args.checkpoint}.pt", map_location="cpu", weights_only=False)
        stn, lprnet = SpatialTransformer(), LPRNet()
        stn.load_state_dict(state["stn"]), lprnet.load_state_dict(state["lprnet"])
    for name, data in validations.items():
        print(validate(name, stn, lprnet, data).summary(top=10))
    return 0


def export(args) -> int:
    """A checkpoint's networks as the project's weight files, in the pretrained checkpoints' format: the last epoch's
    by default, where the schedule ends; the validation sets that pick best.pt hold 25 real plates, too few to pick
    between epochs."""
    state = torch.load(args.out / f"{args.checkpoint}.pt", map_location="cpu", weights_only=False)
    for name, path in OUTPUTS.items():
        torch.save({"net_state_dict": state[name]}, path)
        print(f"wrote {path}: epoch {state['epoch']}, SHA-256 {sha256_of(path)} (record it in plates/weights.py)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("verb", choices=["sheet", "train", "validate", "export"])
    parser.add_argument("--detect", type=Path, default=SHARED / "detect")
    parser.add_argument("--e2e", type=Path, default=SHARED / "e2e.json", help="photos never to train on")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "runs" / "recognizer")
    parser.add_argument("--sheet", type=Path, default=PROJECT_ROOT / "docs" / "recognizer.sheet.png")
    parser.add_argument("--init", default="pretrained", help="pretrained, scratch, or a checkpoint (last.pt) to go on from")
    parser.add_argument("--epochs", type=int, default=TrainSettings.epochs)
    parser.add_argument("--batch-size", type=int, default=TrainSettings.batch_size)
    parser.add_argument("--lr", type=float, default=TrainSettings.lr)
    parser.add_argument("--synthetic", type=int, default=60000, help="synthetic crops rendered")
    parser.add_argument("--synthetic-per-epoch", type=int, default=TrainSettings.synthetic_per_epoch)
    parser.add_argument("--enlarge-share", type=float, default=ENLARGE_SHARE,
                        help="share of synthetic plates made as a small photo enlarged to the frame")
    parser.add_argument("--real-cuts", type=int, default=40, help="augmented cuts of each real plate")
    parser.add_argument("--min-label-confidence", type=float, default=0.3)
    parser.add_argument("--pretrained", action="store_true", help="validate: the reference weights, not a checkpoint")
    parser.add_argument("--checkpoint", choices=["last", "best"], default="last", help="export: which epoch's")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    verbs = {"sheet": sheet, "train": run_training, "validate": run_validation, "export": export}
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
