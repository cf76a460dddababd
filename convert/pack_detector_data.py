"""Copy a YOLO data set small enough to travel to a GPU machine: photos shrunk to the training size, as WebP.

The device machine takes at most 64 MiB a call (the tool library's device README) and keeps nothing between calls,
so what one training run needs must travel in one; `runs/scenes2` is about 180 MB of JPEG. Ultralytics shrinks every
photo to `imgsz` on its longer side before it augments, so a photo stored at that size trains the same; WebP at
quality 65 keeps a 14 px plate's edges and is a seventh of the bytes. One file travels smaller than thousands (the
labels), so the copy goes as a tarball:

    python convert/pack_detector_data.py runs/scenes2 .gpu/scenes2 --imgsz 608 --quality 65 --val-every 4
    tar -C .gpu -czf .gpu/scenes2.tgz scenes2
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from PIL import Image


def shrink(source: Path, dest: Path, imgsz: int, quality: int) -> int:
    """Write `source` to `dest` (WebP) with its longer side at most `imgsz`; return the bytes written."""
    with Image.open(source) as image:
        image = image.convert("RGB")
        image.thumbnail((imgsz, imgsz), Image.Resampling.LANCZOS)
        image.save(dest, "WEBP", quality=quality, method=6)
    return dest.stat().st_size


def pack(data: Path, out: Path, imgsz: int, quality: int, processes: int, val_every: int) -> int:
    """Write `data`'s splits under `out`, every `val_every`th val photo; return the bytes its photos take."""
    photos = sorted((data / "images").glob("*/*"))
    photos = [p for p in photos if p.parent.name != "val"] + [p for p in photos if p.parent.name == "val"][::val_every]
    if not photos:
        raise SystemExit(f"{data}: no photos under images/<split>: not a YOLO data set")
    for split in {image.parent.name for image in photos}:
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    for image in photos:
        label = data / "labels" / image.parent.name / f"{image.stem}.txt"
        if label.exists():
            shutil.copy(label, out / "labels" / image.parent.name / label.name)
    shutil.copy(data / "data.yaml", out / "data.yaml")
    webps = [out / "images" / image.parent.name / f"{image.stem}.webp" for image in photos]
    # Spawned, not forked: a worker forked from a process with other threads (OpenVINO's, torch's: the tests' own
    # process) can start with a lock one of them held, and wait on it for ever (it did, in a CI run).
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        return sum(pool.map(partial(shrink, imgsz=imgsz, quality=quality), photos, webps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a YOLO data set: data.yaml, images/<split>, labels/<split>")
    parser.add_argument("out", type=Path)
    parser.add_argument("--imgsz", type=int, default=608, help="the training size: the longer side, at most")
    parser.add_argument("--quality", type=int, default=65)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--val-every", type=int, default=1, help="keep every n-th val photo: val only shows progress")
    args = parser.parse_args()
    size = pack(args.data, args.out, args.imgsz, args.quality, args.processes, args.val_every)
    print(f"{args.out}: {size / 2**20:.1f} MiB of photos")


if __name__ == "__main__":
    main()
