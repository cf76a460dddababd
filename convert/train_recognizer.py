"""Train the project's recognizer (STN + LPRNet) on real plates read by eye and on synthetic plates, reproducibly.

    python convert/train_recognizer.py sheet                 # docs/recognizer.sheet.png: synthetic beside real crops
    python convert/train_recognizer.py train                 # resumes from runs/recognizer/last.pt
    python convert/train_recognizer.py validate [--pretrained]   # the validation sets, read by last.pt or the reference
    python convert/train_recognizer.py validate --committed --weights rows   # ... or by the committed weights
    python convert/train_recognizer.py export                # weights/plates_stn.pt, weights/plates_lprnet.pt

Real plates: the labels of labels/*.json (convert/read_by_eye.py), those read with every character certain; a
two-line plate is read with its rows side by side in one crop (plates.recognition.crops.side_by_side), as are the
synthetic two-line plates (plates.training.dataset.TWO_LINE_SHARE of them); --two-line rows reads each row apart
(plates.recognition.rows). Each text belongs to one split (plates.training.real_plates.split_of): train, val (read
after each epoch) or test (never read here: `convert/read_by_eye.py manifest` makes it a `plates eval` manifest).
With --scenes, the two-line plates rendered into the detector's training scenes (convert/make_scenes.py) are cut as
served too and mixed into the real crops, and those of its val scenes are read after each epoch (all, and those at
least SMALL_WIDTH px wide); --two-line-only trains on two-line plates alone, as lprnet_rows reads nothing else
(--init rows: from its committed weights); --stacked-cuts adds real one-line plates restacked as two-line ones, type
1A and four digits over two letters (plates.training.stacked). No label may be of a photo e2e.json lists or of
detect/images/val: the run stops if one is. Synthetic plates are rendered with ../shared/fonts/GOST-R-50577-93.ttf.
Everything is seeded; generated sets are cached in --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
import torch

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.build.repository import RECOGNIZERS, TWO_LINE_RECOGNIZER, load_network
from plates.build.weights import find_weights, sha256_of
from plates.evaluation.scoring import SMALL_WIDTH
from plates.nets import LPRNet, SpatialTransformer
from plates.recognition.crops import TWO_LINE_LAYOUTS
from plates.training.augment import ENLARGE_SHARE
from plates.training.by_eye import load_labels
from plates.training.dataset import (
    TWO_LINE_SHARE,
    CropSet,
    background_photos,
    mixed,
    real_set,
    stacked_set,
    synthetic_set,
)
from plates.training.real_plates import check_trainable, held_out_looks, held_out_photos, real_plates, split_of
from plates.training.scene_set import rendered_plates
from plates.training.stacked import KINDS
from plates.training.trainer import TrainSettings, load_checkpoint, train, validate

SHARED = shared_dir() / "data"
LABELS = sorted((PROJECT_ROOT / "labels").glob("*.json"))
WEIGHT_SETS = {"plates": RECOGNIZERS["plates"], "rows": TWO_LINE_RECOGNIZER}


def pretrained(wide: bool = False) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The reference STN and LPRNet; a wide LPRNet takes the reference's weights as they are (same layers)."""
    lprnet = LPRNet(wide=wide)
    lprnet.load_state_dict(load_network(LPRNet, find_weights("lprnet.pth")).state_dict())
    return load_network(SpatialTransformer, find_weights("stn.pth")), lprnet


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
    labels = [label for path in args.labels for label in load_labels(path)]
    check_trainable(labels, SHARED, held_out_photos(args.detect, args.e2e), held_out_looks(args.detect, args.e2e))
    plates = real_plates(labels, SHARED)
    one_line = [p for p in plates if p.lines == 1]
    if args.two_line_only:
        plates = [p for p in plates if p.lines == 2]
    train_plates = [p for p in plates if split_of(p.text) == "train"]
    val_plates = [p for p in plates if split_of(p.text) == "val"]
    print(
        f"real plates read by eye: {len(train_plates)} to train on, {len(val_plates)} to validate, "
        f"{len(plates) - len(train_plates) - len(val_plates)} held out for testing",
        flush=True,
    )
    backgrounds = background_photos(args.detect, args.e2e)
    layout = args.two_line
    two_line_share = 1.0 if args.two_line_only else TWO_LINE_SHARE
    sets = (
        [cached(out / "real.npz", lambda: real_set(train_plates, args.real_cuts, args.seed, layout=layout))]
        if train_plates
        else []
    )
    if args.scenes:
        sets.append(
            cached(
                out / "scenes.npz",
                lambda: real_set(rendered_plates(args.scenes, "train"), args.scene_cuts, args.seed + 3, layout=layout),
            )
        )
    if args.stacked_cuts:
        stacked = [p for p in one_line if split_of(p.text) == "train"]
        sets.append(
            cached(out / "stacked.npz", lambda: stacked_set(stacked, args.stacked_cuts, args.seed + 5, layout=layout))
        )
    real = mixed(sets, args.seed) if len(sets) > 1 else sets[0]
    synthetic = cached(
        out / "synthetic.npz",
        lambda: synthetic_set(
            args.synthetic,
            args.seed,
            backgrounds,
            enlarge_share=args.enlarge_share,
            layout=layout,
            two_line_share=two_line_share,
        ),
    )
    validations = {}
    if not args.two_line_only:
        validations["real-val"] = cached(
            out / "real_val.npz", lambda: real_set(val_plates, 1, args.seed + 1, augment=False, layout=layout)
        )
        validations["real-val-aug"] = cached(
            out / "real_val_aug.npz", lambda: real_set(val_plates, 4, args.seed + 2, layout=layout)
        )
    validations["synthetic-val"] = cached(
        out / "synthetic_val.npz",
        lambda: synthetic_set(
            args.synthetic_val, args.seed + 1, backgrounds, layout=layout, two_line_share=two_line_share
        ),
    )
    if args.stacked_cuts:
        stacked_val = [p for p in one_line if split_of(p.text) == "val"]
        for kind, name in zip(KINDS, ("stacked-val", "stacked-val-four-digits")):
            make = lambda kind=kind: stacked_set(  # noqa: E731
                stacked_val, 1, args.seed + 6, augment=False, layout=layout, kinds=(kind,)
            )
            validations[name] = cached(out / f"{name.replace('-', '_')}.npz", make)
    if args.scenes:  # read as served, from the plate's own box: all of them, and those a reader could read
        two_line = rendered_plates(args.scenes, "val")
        wide = [plate for plate in two_line if plate.box[2] - plate.box[0] >= SMALL_WIDTH]
        validations["two-line-val"] = cached(
            out / "scenes_val.npz", lambda: real_set(two_line, 1, args.seed + 4, augment=False, layout=layout)
        )
        validations[f"two-line-val-{SMALL_WIDTH:g}px"] = cached(
            out / "scenes_val_wide.npz", lambda: real_set(wide, 1, args.seed + 4, augment=False, layout=layout)
        )
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


def starting_networks(init: str, wide: bool = False) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The STN and LPRNet a run starts from: see --init."""
    if init == "pretrained":
        return pretrained(wide)
    if init == "scratch":
        return SpatialTransformer(), LPRNet(wide=wide)
    if init in WEIGHT_SETS:  # the project's committed weights
        files = WEIGHT_SETS[init]
        stn, lprnet = (
            load_network(SpatialTransformer, find_weights(files["stn"])),
            load_network(LPRNet, find_weights(files["lprnet"])),
        )
    else:  # a checkpoint of an earlier run: this one goes on from its networks
        stn, lprnet = load_checkpoint(Path(init))
    if wide and not lprnet.architecture["wide"]:  # the same layers: its weights, 39 frames
        wide_lprnet = LPRNet(wide=True)
        wide_lprnet.load_state_dict(lprnet.state_dict())
        lprnet = wide_lprnet
    return stn, lprnet


def run_training(args) -> int:
    torch.set_num_threads(args.threads)
    real, synthetic, validations = datasets(args)
    stn, lprnet = starting_networks(args.init, args.wide)
    settings = TrainSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        synthetic_per_epoch=args.synthetic_per_epoch,
        real_per_epoch=args.real_per_epoch,
        seed=args.seed,
    )
    train(stn, lprnet, real, synthetic, validations, args.out, settings, log=lambda line: print(line, flush=True))
    return 0


def run_validation(args) -> int:
    torch.set_num_threads(args.threads)
    _, _, validations = datasets(args)
    if args.pretrained or args.committed:
        stn, lprnet = starting_networks("pretrained" if args.pretrained else args.weights)
    else:
        stn, lprnet = load_checkpoint(args.out / f"{args.checkpoint}.pt")
    for name, data in validations.items():
        print(validate(name, stn, lprnet, data).summary(top=10))
    return 0


def export(args) -> int:
    """A checkpoint's networks as the project's weight files, in the pretrained checkpoints' format (LPRNet's with its
    architecture): the last epoch's by default, where the schedule ends, not the one a validation set picks."""
    state = torch.load(args.out / f"{args.checkpoint}.pt", map_location="cpu", weights_only=False)
    for name, file in WEIGHT_SETS[args.weights].items():
        path = PROJECT_ROOT / "weights" / file
        weights = {"net_state_dict": state[name]}
        if name == "lprnet" and state.get("architecture"):
            weights["architecture"] = state["architecture"]
        torch.save(weights, path)
        print(f"wrote {path}: epoch {state['epoch']}, SHA-256 {sha256_of(path)} (record it in plates/build/weights.py)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("verb", choices=["sheet", "train", "validate", "export"])
    parser.add_argument("--labels", type=Path, nargs="+", default=LABELS, help="plates read by eye (labels/*.json)")
    parser.add_argument("--detect", type=Path, default=SHARED / "detect", help="its val split is never trained on")
    parser.add_argument("--e2e", type=Path, default=SHARED / "e2e.json", help="photos never to train on")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "runs" / "recognizer")
    parser.add_argument("--sheet", type=Path, default=PROJECT_ROOT / "docs" / "recognizer.sheet.png")
    parser.add_argument(
        "--init",
        default="pretrained",
        help="pretrained, scratch, the committed weights (plates, rows), or a checkpoint (last.pt) to go on from",
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help="an LPRNet of 39 frames, not 18 (plates.nets.lprnet); from --init of 18, its weights",
    )
    parser.add_argument("--epochs", type=int, default=TrainSettings.epochs)
    parser.add_argument("--batch-size", type=int, default=TrainSettings.batch_size)
    parser.add_argument("--lr", type=float, default=TrainSettings.lr)
    parser.add_argument("--synthetic", type=int, default=60000, help="synthetic crops rendered")
    parser.add_argument("--synthetic-val", type=int, default=2000, help="synthetic crops read after each epoch")
    parser.add_argument("--synthetic-per-epoch", type=int, default=TrainSettings.synthetic_per_epoch)
    parser.add_argument(
        "--enlarge-share",
        type=float,
        default=ENLARGE_SHARE,
        help="share of synthetic plates made as a small photo enlarged to the frame",
    )
    parser.add_argument("--real-cuts", type=int, default=12, help="augmented cuts of each real plate")
    parser.add_argument(
        "--scenes",
        type=Path,
        help="a scene set (convert/make_scenes.py) whose rendered two-line "
        "plates are trained on (its train split) and read after each epoch (its val split)",
    )
    parser.add_argument(
        "--two-line",
        choices=TWO_LINE_LAYOUTS,
        default="side-by-side",
        help="a two-line plate's input: its rows side by side in one 94x24 crop, or its rows apart, "
        "each a 94x24 crop, their frames read on as one text (plates.recognition.rows); serve the "
        "weights with yolo's two_line_layout set alike. The crops cached in --out keep the layout "
        "they were made with",
    )
    parser.add_argument(
        "--two-line-only",
        action="store_true",
        help="train on two-line plates alone (needs --scenes): the rendered ones of the scenes, those "
        "read by eye, and synthetic ones; lprnet_rows reads nothing else",
    )
    parser.add_argument("--scene-cuts", type=int, default=4, help="augmented cuts of each rendered two-line plate")
    parser.add_argument(
        "--stacked-cuts",
        type=int,
        default=0,
        help="also train on the real one-line private plates restacked as two-line plates, type 1A and four digits "
        "over two letters (plates.training.stacked), each cut this many ways, and read the val split's after each "
        "epoch, by kind (0: none)",
    )
    parser.add_argument(
        "--real-per-epoch",
        type=int,
        default=TrainSettings.real_per_epoch,
        help="real crops an epoch takes, in turn (0: all)",
    )
    parser.add_argument("--pretrained", action="store_true", help="validate: the reference weights, not a checkpoint")
    parser.add_argument(
        "--committed", action="store_true", help="validate: the committed weights --weights names, not a checkpoint"
    )
    parser.add_argument("--checkpoint", choices=["last", "best"], default="last", help="export: which epoch's")
    parser.add_argument(
        "--weights",
        choices=sorted(WEIGHT_SETS),
        default="plates",
        help="export, validate --committed: the served recognizer's weight files, or the two-line "
        "rows' (model lprnet_rows)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.two_line_only and not args.scenes:
        parser.error("--two-line-only needs --scenes: the two-line plates read by eye are too few to train on")
    verbs = {"sheet": sheet, "train": run_training, "validate": run_validation, "export": export}
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
