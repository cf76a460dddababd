"""plates-client IMAGE [IMAGE ...] [--url localhost:8000] [--json] [--draw DIR] [--raw]: print the plates of each photo.

Each photo is sent as its file's bytes, which the server decodes; `--raw` sends its decoded pixels instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from plates.client.drawing import make_folder, write_drawing
from plates.client.readiness import require_ready
from plates.client.service import Plate, PlatesClient
from plates.exceptions import OutputError, PlatesError, ServerUnavailableError, naming
from plates.photos.decoding import decode_pixels
from plates.photos.files import read_photo

DEFAULT_URL = "localhost:8000"


def add_url_option(parser: argparse.ArgumentParser) -> None:
    """`--url`, the same for every command that talks to the server."""
    parser.add_argument(
        "--url",
        default=os.environ.get("PLATES_URL", DEFAULT_URL),
        help=f"Triton HTTP endpoint (env PLATES_URL; default {DEFAULT_URL})",
    )


def format_plain(path: str, plates: list[Plate], candidates: int = 0) -> str:
    if not plates:
        return f"{path}: no plates"
    lines = [f"{path}: {len(plates)} plate{'s' if len(plates) != 1 else ''}"]
    for plate in plates:
        box = ", ".join(f"{v:.0f}" for v in plate.box)
        region = f"  {plate.region.name} ({plate.region.code})" if plate.region else ""
        lines.append(
            f"  {plate.text or '(unread)':<10} box=({box}) score={plate.score:.2f} text_score={plate.text_score:.2f}"
            + region
        )
        if candidates and plate.candidates:
            lines.append("    candidates: " + ", ".join(f"{t} {s:.3f}" for t, s in plate.candidates[:candidates]))
    return "\n".join(lines)


def format_json(path: str, plates: list[Plate], candidates: int = 0) -> str:
    return json.dumps({"image": path, "plates": [p.to_dict(candidates) for p in plates]}, ensure_ascii=False)


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plates-client", description="Read the licence plates of photos.")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photo files (JPEG, PNG, ...)")
    add_url_option(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per line per image")
    parser.add_argument("--draw", type=Path, metavar="DIR", help="also write each photo with its plates drawn to DIR")
    parser.add_argument(
        "--candidates",
        type=non_negative_int,
        default=0,
        metavar="K",
        help="also print up to K likeliest texts of each plate with their probabilities (the server sends up to "
        "its `candidates` parameter, 3 by default), in --json too",
    )
    parser.add_argument("--raw", action="store_true", help="send decoded pixels instead of the file's bytes")
    args = parser.parse_args(argv)

    try:
        if args.draw:
            make_folder(args.draw)
        require_ready(args.url)
    except (OutputError, ServerUnavailableError) as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    status = 0
    with PlatesClient(args.url) as client:
        for path in args.images:
            try:
                data = read_photo(path)
                # Decoded here only where the pixels are needed: to send them, or to draw on them.
                image = decode_pixels(data, path) if args.raw or args.draw else None
                with naming(path):
                    plates = client.recognize(image if args.raw else data)
                formatted = format_json if args.json else format_plain
                print(formatted(path, plates, args.candidates), flush=True)
                if args.draw:
                    write_drawing(args.draw, path, image, plates)
            except ServerUnavailableError as error:
                print(f"error: {error}", file=sys.stderr)
                return error.exit_code
            except PlatesError as error:  # this image failed; the others may still be read
                print(f"error: {error}", file=sys.stderr)
                status = status or error.exit_code
    return status


if __name__ == "__main__":
    sys.exit(main())
