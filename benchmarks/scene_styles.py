"""Reading by plate style on the rendered scenes: of the plates `plates eval` found, how many read right, for each
style scenes.json gives them (private, taxi, police, military, diplomatic, square, motorcycle, ...; "real" for the
real plates the scenes hold), from one or more `plates eval --json` reports of the same manifest side by side.

    poetry run plates eval runs/scenes/val.json --json > before.json   # one server or setting
    poetry run plates eval runs/scenes/val.json --json > after.json    # the other
    poetry run python benchmarks/scene_styles.py before.json after.json [--scenes runs/scenes] [--by-code]

A plate any report missed is left out of every column, so the columns count the same plates. --by-code splits each
style by whether the plate's region code is one a region was given (plates.recognition.regions): the scenes draw
every code the formats accept, and the recognizers learnt from real plates, which carry only those.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from plates.recognition.formats import region_code
from plates.recognition.regions import REGIONS


def failures(report: dict) -> dict[tuple[str, str], str]:
    """(image, text) -> "missed", "unread" or "wrong" for each labelled plate the report did not read right."""
    failed: dict[tuple[str, str], str] = {}
    for photo in report["errors"]:
        for plate in photo["missed"]:
            failed[(photo["image"], plate.get("text"))] = "missed"
        for plate in photo["misread"]:
            failed[(photo["image"], plate["expected"])] = "wrong" if plate["got"] else "unread"
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="`plates eval MANIFEST --json` outputs")
    parser.add_argument("--scenes", type=Path, default=Path("runs/scenes"), help="where scenes.json and val.json are")
    parser.add_argument("--by-code", action="store_true", help="each style apart for issued and unissued region codes")
    args = parser.parse_args(argv)
    scenes = {entry["image"]: entry for entry in json.loads((args.scenes / "scenes.json").read_text())}
    reports = [failures(json.loads(path.read_text())) for path in args.reports]
    found, right = Counter(), [Counter() for _ in reports]
    for entry in json.loads((args.scenes / "val.json").read_text()):
        for plate in scenes[entry["image"]]["plates"]:
            key = (entry["image"], plate.get("text"))
            if not plate.get("text") or any(failed.get(key) == "missed" for failed in reports):
                continue
            style = plate.get("style") or "real"
            if args.by_code:
                style += " issued" if region_code(plate["text"]) in REGIONS else " unissued"
            found[style] += 1
            for counts, failed in zip(right, reports):
                counts[style] += key not in failed
    names = [path.name for path in args.reports]
    print(f"{'style':<21} {'found':>6}  " + "  ".join(f"{name:>14}" for name in names))
    for style in sorted(found):
        print(f"{style:<21} {found[style]:>6}  " + "  ".join(f"{counts[style]:>14}" for counts in right))
    print(f"{'all':<21} {sum(found.values()):>6}  " + "  ".join(f"{sum(c.values()):>14}" for c in right))
    return 0


if __name__ == "__main__":
    sys.exit(main())
