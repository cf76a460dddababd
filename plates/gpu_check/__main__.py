"""python -m plates.gpu_check bundle | run: make the bundle here, or run the check on a GPU machine
(scripts/gpu-bundle.sh and scripts/gpu-check.sh call these)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.exceptions import PlatesError
from plates.gpu_check.check import CONCURRENCY, Variant, run_check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plates.gpu_check", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    bundle = commands.add_parser("bundle", help="make the bundle the GPU check carries (plates.gpu_check.bundle)")
    bundle.add_argument("--out", type=Path, default=PROJECT_ROOT / ".gpu", help="its folder, made anew (.gpu)")
    bundle.add_argument(
        "--data",
        type=Path,
        default=shared_dir() / "data",
        help="the data folder that holds samples/ and e2e.json (../shared/data)",
    )
    check = commands.add_parser("run", help="run the check on this machine (plates.gpu_check.check)")
    check.add_argument("--bundle", type=Path, default=PROJECT_ROOT / ".gpu", help="the bundle's folder (.gpu)")
    check.add_argument("--out", type=Path, required=True, help="where its findings go")
    check.add_argument("--work", type=Path, required=True, help="where its repository and counts go")
    check.add_argument("--kind", choices=("gpu", "cpu"), default="gpu", help="the models' instance kind (gpu)")
    check.add_argument("--requests", type=int, default=60, help="plates bench's requests per level (60)")
    check.add_argument(
        "--variant",
        type=Variant.parse,
        action="append",
        default=[],
        metavar="VARIANT",
        help="also serve and time this configuration: 'graphs' (yolo's CUDA graphs), a number of "
        "instances of plate_recognition and yolo ('4'), or both ('graphs,4'); again for more",
    )
    check.add_argument("--concurrency", type=int, nargs="+", default=None, help="plates bench's levels")
    args = parser.parse_args(argv)
    try:
        if args.command == "bundle":
            from plates.gpu_check.bundle import build_bundle

            sizes = build_bundle(args.out, args.data)
            print("\n".join(f"{name}: {size / 2**20:.1f} MiB" for name, size in sizes.items()))
            return 0
        passed = run_check(
            args.bundle,
            args.out,
            args.work,
            args.kind,
            args.requests,
            tuple(args.concurrency or CONCURRENCY),
            tuple(args.variant),
        )
        return 0 if passed else 1
    except PlatesError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
