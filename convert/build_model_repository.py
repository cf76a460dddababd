"""Build the model repository from the weights: TorchScript STN and LPRNet, and the detector for `yolo`.

    python convert/build_model_repository.py                       # local: model_repository/, weights looked up
    python convert/build_model_repository.py --weights-dir weights --instance-kind gpu   # the serving image
    python convert/build_model_repository.py --recognizer pretrained   # the reference STN and LPRNet instead

Weights are looked up in --weights-dir, else $PLATES_WEIGHTS_DIR, weights/, ../shared/weights, and checked
against their recorded SHA-256. The same script builds the repository here and in the Dockerfile.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plates.build.paths import DEFAULT_REPOSITORY
from plates.build.repository import INSTANCE_KINDS, RECOGNIZERS, build_model_repository
from plates.exceptions import PlatesError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", type=Path, default=DEFAULT_REPOSITORY, help="model repository to fill")
    parser.add_argument("--weights-dir", type=Path, default=None, help="folder holding the weight files")
    parser.add_argument(
        "--instance-kind", choices=sorted(INSTANCE_KINDS), default="auto", help="pin every model to GPU or CPU"
    )
    parser.add_argument(
        "--recognizer",
        choices=sorted(RECOGNIZERS),
        default="plates",
        help="STN and LPRNet weights: the project's own (weights/plates_*.pt) or the pretrained reference",
    )
    args = parser.parse_args(argv)
    try:
        for path in build_model_repository(args.repository, args.weights_dir, args.instance_kind, args.recognizer):
            print(f"wrote {path}")
    except PlatesError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
