"""The held-out two-line scenes whose photos no served model learnt from, as a `plates eval` manifest.

    poetry run python convert/two_line_unseen.py [--scenes runs/scenes]   # writes SCENES/val_two_line_unseen.json

A scene set's val split (convert/make_scenes.py) holds the photo groups whose hash falls under the val share and,
since 56b9a3a, every group that holds a plate of the recognizer's test split. The committed two-line recognizer
(lprnet_rows) learnt from a scene set made before that rule, with 1,909 train photos and 203 val photos: the groups
the rule moved to val were in its train split, with other plates rendered into them. This manifest keeps the scenes
of val_two_line.json whose photos were val by hash alone, which neither detector nor recognizer learnt from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.training.by_eye import load_labels
from plates.training.scene_photos import group_bucket, load_photos, photo_groups

SHARED = shared_dir() / "data"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=Path, default=PROJECT_ROOT / "runs" / "scenes")
    parser.add_argument("--val-share", type=float, default=0.1, help="the one the scene set was made with")
    args = parser.parse_args(argv)
    labels = [label for path in sorted((PROJECT_ROOT / "labels").glob("*.json")) for label in load_labels(path)]
    photos = load_photos(SHARED / "detect", SHARED / "rfplates" / "scenes", SHARED / "e2e.json", labels, SHARED)
    by_hash = {
        str(photo.path) for photo, group in zip(photos, photo_groups(photos)) if group_bucket(group) < args.val_share
    }
    sources = {record["image"]: record["source"] for record in json.loads((args.scenes / "scenes.json").read_text())}
    manifest = json.loads((args.scenes / "val_two_line.json").read_text())
    kept = [entry for entry in manifest if sources[entry["image"]] in by_hash]
    out = args.scenes / "val_two_line_unseen.json"
    out.write_text(json.dumps(kept, indent=1))
    plates = sum(len(entry["plates"]) for entry in kept)
    print(
        f"wrote {out}: {len(kept)} of {len(manifest)} images, {plates} two-line plates "
        f"({len(by_hash)} photos val by hash alone)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
