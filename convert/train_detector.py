"""Train the plate detector (Ultralytics YOLO) from scratch on the project's plate photos.

Offline by design: the model is built from its yaml (no pretrained download) and nothing is fetched.
Sized for a 2-core CPU: YOLO11n at 480 px runs at about 3 images/s there, so 30 epochs of the 436
training photos take about 85 minutes. Re-running with the same run name resumes from `last.pt`.

    python convert/train_detector.py --data ../shared/data/detect --out runs/detector
    cp runs/detector/train/weights/best.pt weights/plate_detector.pt
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import yaml

os.environ.setdefault("YOLO_OFFLINE", "1")


def dataset_yaml(data_dir: Path, dest: Path) -> Path:
    """Copy the data set's `data.yaml` with `path` made absolute: Ultralytics resolves `.` against its own cwd."""
    spec = yaml.safe_load((data_dir / "data.yaml").read_text())
    spec["path"] = str(data_dir.resolve())
    dest.write_text(yaml.safe_dump(spec))
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/detect"), help="YOLO-format folder")
    parser.add_argument("--out", type=Path, default=Path("runs/detector"), help="where runs are written")
    parser.add_argument("--name", default="train", help="run name; an existing run resumes from its last.pt")
    parser.add_argument("--model", default="yolo11n.yaml", help="architecture yaml, trained from scratch")
    parser.add_argument("--imgsz", type=int, default=480)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from ultralytics import YOLO

    last = args.out / args.name / "weights" / "last.pt"
    if last.exists():
        YOLO(str(last)).train(resume=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = dataset_yaml(args.data, Path(tmp) / "data.yaml")
        YOLO(args.model).train(
            data=str(data),
            imgsz=args.imgsz,
            epochs=args.epochs,
            batch=args.batch,
            seed=args.seed,
            deterministic=True,
            pretrained=False,
            amp=False,  # AMP is a CUDA feature; on CPU it only adds a check that downloads weights
            plots=False,
            cache="ram",
            workers=2,
            device="cpu",
            project=str(args.out.resolve()),
            name=args.name,
            exist_ok=True,
        )


if __name__ == "__main__":
    main()
