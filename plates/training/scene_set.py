"""The detector's scene set on disk: a YOLO dataset (Ultralytics' layout: images/ and labels/, train and val, and a
data.yaml) of pasted scenes and close-ups (plates.training.scenes), with every photo they come from beside them as
it is (a link to it, its labels with their classes), and manifests `plates eval` reads.

Files, under the output folder:
- images/<split>/pasted_NNNNNN.jpg, closeup_NNNNNN.jpg, background_NNNNNN.jpg, photo_<name> (a link), and
  labels/<split>/<same stem>.txt (empty for a background);
- data.yaml: the two splits and the class names; `path` is the folder's absolute path;
- scenes.json: every image, its kind, the photo it comes from, and each plate's box, class, text and style;
- val.json, val_two_line.json, val_closeups.json: `plates eval` manifests of the val images (every plate with its
  text where known), of the val images holding a two-line plate (those plates only: recall and reading, not
  precision) and of the val close-ups; val_photos.txt: the photos val scenes come from, never to be trained on.

Scene i of a kind and split is drawn from generator (seed, split, kind, i): the set is the same however many
processes write it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import yaml
from PIL import Image

from plates.training.real_plates import RealPlate
from plates.training.scene_photos import CLASS_NAMES, TWO_LINE, Photo, ScenePlate, yolo_rows
from plates.training.scenes import EXTRA_PLATES, Scene, background, closeup, pasted_scene

SPLITS = ("train", "val")
KINDS = ("pasted", "closeup", "background")
JPEG_QUALITY = {"pasted": 92, "closeup": 95, "background": 95}
CHUNK = 50  # scenes a worker writes at a time
TRIES = 1000  # photos tried for one scene before giving up (a close-up needs a plate wide enough)


@dataclass(frozen=True)
class Counts:
    pasted: int
    closeups: int
    backgrounds: int = 0

    def of(self, kind: str) -> int:
        return {"pasted": self.pasted, "closeup": self.closeups, "background": self.backgrounds}[kind]


def counts_of(total: Counts, val_share: float) -> dict[str, Counts]:
    """How many of each kind each split gets: val `val_share` of them, train the rest."""
    val = Counts(*(round(total.of(kind) * val_share) for kind in KINDS))
    return {"train": Counts(*(total.of(kind) - val.of(kind) for kind in KINDS)), "val": val}


def scene_at(
    photos: Sequence[Photo], kind: str, split: str, index: int, seed: int, extra_plates: int = EXTRA_PLATES
) -> Scene:
    """Scene `index` of `kind` in `split`: photos drawn from its generator until one gives one."""
    rng = np.random.default_rng([seed, SPLITS.index(split), KINDS.index(kind), index])
    for _ in range(TRIES):
        photo = photos[int(rng.integers(len(photos)))]
        scene = (
            pasted_scene(photo, rng, extra_plates=extra_plates)
            if kind == "pasted"
            else {"closeup": closeup, "background": background}[kind](photo, rng)
        )
        if scene is not None:
            return scene
    raise ValueError(f"no {kind} scene from {TRIES} photos of {split}: no plate leaves room for one")


def _record(image: str, kind: str, source: Path, plates: Sequence[ScenePlate]) -> dict:
    return {
        "image": image,
        "kind": kind,
        "source": str(source),
        "plates": [
            {"box": [round(v, 2) for v in p.box], "class": p.cls, "text": p.text, "style": p.style} for p in plates
        ],
    }


def _write_scene(out: Path, split: str, name: str, scene: Scene) -> dict:
    image_path = out / "images" / split / f"{name}.jpg"
    cv2.imwrite(str(image_path), scene.image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY[scene.kind]])
    height, width = scene.image.shape[:2]
    (out / "labels" / split / f"{name}.txt").write_text(yolo_rows(scene.plates, width, height))
    return _record(f"images/{split}/{name}.jpg", scene.kind, scene.source, scene.plates)


def _link_photo(out: Path, split: str, photo: Photo) -> dict:
    """The photo as it is, linked, with its labels and their classes."""
    with Image.open(photo.path) as image:  # its header: the size, without decoding it
        width, height = image.size
    name = f"photo_{photo.path.stem}"
    link = out / "images" / split / f"{name}{photo.path.suffix}"
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(photo.path.resolve(), link)
    (out / "labels" / split / f"{name}.txt").write_text(yolo_rows(photo.plates, width, height))
    return _record(f"images/{split}/{link.name}", "photo", photo.path, photo.plates)


_JOB: dict = {}  # what the workers share: set before forking


def _write_chunk(chunk: tuple[str, str, int, int]) -> list[dict]:
    split, kind, start, stop = chunk
    photos, out, seed = _JOB["photos"][split], _JOB["out"], _JOB["seed"]
    return [
        _write_scene(
            out, split, f"{kind}_{index:06d}", scene_at(photos, kind, split, index, seed, _JOB["extra_plates"])
        )
        for index in range(start, stop)
    ]


def write_scene_set(
    splits: dict[str, list[Photo]],
    out: Path,
    counts: dict[str, Counts],
    seed: int,
    processes: int = 1,
    originals: bool = True,
    extra_plates: int = EXTRA_PLATES,
    log: Callable[[str], None] = print,
) -> list[dict]:
    """Write the set (the module says what) and return its records. A set written before in `out` (its scenes.json
    says so) is replaced whole; ValueError where `out` holds images of anything else."""
    out = Path(out)
    if (out / "scenes.json").is_file():
        for folder in ("images", "labels"):
            shutil.rmtree(out / folder, ignore_errors=True)
    elif (out / "images").exists():
        raise ValueError(f"{out} holds images/ but no scenes.json: not a scene set this writes over (remove it first)")
    for folder in ("images", "labels"):
        for split in SPLITS:
            (out / folder / split).mkdir(parents=True, exist_ok=True)
    _JOB.update(photos=splits, out=out, seed=seed, extra_plates=extra_plates)
    chunks = [
        (split, kind, start, min(start + CHUNK, counts[split].of(kind)))
        for split in SPLITS
        for kind in KINDS
        for start in range(0, counts[split].of(kind), CHUNK)
    ]
    records: list[dict] = []
    if processes > 1:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            for part in pool.imap(_write_chunk, chunks):
                records += part
                log(f"{len(records)} scenes written")
    else:
        for chunk in chunks:
            records += _write_chunk(chunk)
            log(f"{len(records)} scenes written")
    if originals:
        records += [_link_photo(out, split, photo) for split in SPLITS for photo in splits[split]]
    _write_manifests(out, records, splits["val"])
    return records


def _manifest(records: Sequence[dict], keep: Callable[[dict], bool] = lambda plate: True) -> list[dict]:
    return [
        {
            "image": record["image"],
            "plates": [{"box": p["box"], "text": p["text"]} for p in record["plates"] if keep(p)],
        }
        for record in records
    ]


def _write_manifests(out: Path, records: list[dict], val_photos: Sequence[Photo]) -> None:
    records = sorted(records, key=lambda record: record["image"])
    data = {"path": str(out.resolve()), "train": "images/train", "val": "images/val", "names": CLASS_NAMES}
    (out / "data.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (out / "scenes.json").write_text(json.dumps(records, indent=1))
    val = [record for record in records if record["image"].startswith("images/val/")]
    two_line = [record for record in val if any(p["class"] == TWO_LINE for p in record["plates"])]
    manifests = {
        "val.json": _manifest(val),
        "val_two_line.json": _manifest(two_line, lambda plate: plate["class"] == TWO_LINE),
        "val_closeups.json": _manifest([record for record in val if record["kind"] == "closeup"]),
    }
    for name, manifest in manifests.items():
        (out / name).write_text(json.dumps(manifest, indent=1))
    (out / "val_photos.txt").write_text("".join(f"{photo.path}\n" for photo in val_photos))


def rendered_plates(out: Path, split: str = "train", cls: int = TWO_LINE) -> list[RealPlate]:
    """The rendered plates of class `cls` pasted into the `split` scenes of the set at `out`, with their texts, as
    plates a recognizer can be trained on (plates.training.dataset.real_set cuts them as served). Only pasted scenes'
    plates: a photo's own and a close-up's are real, and those are read by eye (labels/), not here."""
    records = json.loads((out / "scenes.json").read_text())
    lines = 2 if cls == TWO_LINE else 1
    return [
        RealPlate(str(out / record["image"]), tuple(plate["box"]), plate["text"], lines)
        for record in records
        if record["kind"] == "pasted" and record["image"].startswith(f"images/{split}/")
        for plate in record["plates"]
        if plate["class"] == cls and plate["text"]
    ]
