"""Train the plate detector (Ultralytics YOLO) from scratch on the project's plate photos.

Offline by design: the model is built from its yaml (no pretrained download) and nothing is fetched.
Sized for a 2-core CPU: YOLO11n at 480 px runs at about 3 images/s there, so 30 epochs of the 436
training photos take about 90 minutes. Later runs started from the previous one's weights (`--init`)
train further, each within another background run. Re-running with the same run name resumes from `last.pt`.
The committed detector is three runs (weights/README.md):

    python convert/train_detector.py --data ../shared/data/detect --out runs/detector
    python convert/train_detector.py --data ../shared/data/detect --out runs/detector \
        --init runs/detector/train/weights/best.pt --name finetune --epochs 20
    python convert/train_detector.py --data ../shared/data/detect --out runs/detector \
        --init runs/detector/finetune/weights/best.pt --name stage3_640 --imgsz 640 --epochs 12
    cp runs/detector/stage3_640/weights/best.pt weights/plate_detector.pt
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import yaml

from plates.build.paths import shared_dir

os.environ.setdefault("YOLO_OFFLINE", "1")


def dataset_yaml(data_dir: Path, dest: Path) -> Path:
    """Copy the data set's `data.yaml` with `path` made absolute: Ultralytics resolves `.` against its own cwd."""
    spec = yaml.safe_load((data_dir / "data.yaml").read_text())
    spec["path"] = str(data_dir.resolve())
    dest.write_text(yaml.safe_dump(spec))
    return dest


def train_arguments(args: argparse.Namespace, data: Path) -> dict:
    """Ultralytics' `train` keyword arguments for the command line's `args` and the data set's yaml."""
    # Ultralytics' warm-up starts biases at lr 0.1: right from scratch, a jolt to weights that are already trained.
    optimiser = dict(optimizer="AdamW", lr0=args.lr0, warmup_epochs=0) if args.lr0 else {}
    return dict(
        data=str(data),
        imgsz=args.imgsz,
        epochs=args.epochs,
        batch=args.batch,
        seed=args.seed,
        degrees=args.degrees,
        **optimiser,
        deterministic=True,
        pretrained=bool(args.init),
        amp=False,  # on CPU AMP does nothing; on a GPU its check downloads weights, and YOLO11n is not GPU-bound
        plots=False,
        cache="ram",
        workers=args.workers,
        device=args.device,
        **({"time": args.time} if args.time else {}),
        project=str(args.out.resolve()),
        name=args.name,
        exist_ok=True,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=shared_dir() / "data" / "detect", help="YOLO-format folder")
    parser.add_argument("--out", type=Path, default=Path("runs/detector"), help="where runs are written")
    parser.add_argument("--name", default="train", help="run name; an existing run resumes from its last.pt")
    parser.add_argument("--model", default="yolo11n.yaml", help="architecture yaml, trained from scratch")
    parser.add_argument("--init", type=Path, help="start from these weights (a previous run's best.pt) instead")
    parser.add_argument("--imgsz", type=int, default=480)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="Ultralytics' device: cpu, or 0 for the first GPU")
    parser.add_argument("--workers", type=int, default=2, help="data loader processes")
    parser.add_argument(
        "--time", type=float, help="train for this many hours, the epochs fitted to it (Ultralytics' `time`)"
    )
    parser.add_argument("--degrees", type=float, default=0.0, help="random rotation augmentation, +/- degrees")
    parser.add_argument(
        "--lr0",
        type=float,
        help="fixed AdamW learning rate without warm-up, for fine-tuning from --init "
        "(default: Ultralytics' automatic optimiser and learning rate, with warm-up)",
    )
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()

    from ultralytics import YOLO

    last = args.out / args.name / "weights" / "last.pt"
    if last.exists():
        YOLO(str(last)).train(resume=True)
        return
    # Kept beside the run, not in a temporary folder: resuming reads the data set from the same path.
    run_dir = args.out / args.name
    run_dir.mkdir(parents=True, exist_ok=True)
    data = dataset_yaml(args.data, run_dir / "data.yaml")
    YOLO(str(args.init) if args.init else args.model).train(**train_arguments(args, data))


if __name__ == "__main__":
    main()
