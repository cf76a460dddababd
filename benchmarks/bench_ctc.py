"""Time the CTC decoder (plates.recognition.ctc.read_plates) per cut, and with --baseline another version of its
module (a copy of an older plates/recognition/ctc.py kept outside the repository), whose readings it also
compares with the current one's. Figures, not assertions.

    poetry run python benchmarks/bench_ctc.py [--baseline /tmp/ctc_old.py] [--logits /tmp/dev_logits.npz] [--rounds 10]

The cuts: those of tests/unit/data/ctc_logits.npy, or with --logits every cut of a file written by
benchmarks/store_ctc_logits.py --all. car.jpg's 15 cuts are read in one call as the service reads them, then all the
cuts in one call, each call with is_plate_prefix's cache emptied first (as on plates never seen before). ms per
cut is the process's CPU time (which other processes' load disturbs less than the clock's), the median over --rounds
rounds, the versions taking turns within a round.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from plates.recognition import ctc
from plates.weights import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "unit" / "data"


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("ctc_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def load_cuts(path: Path | None) -> tuple[np.ndarray, list[str]]:
    """Logits [cuts, classes, time] and each cut's photo."""
    if path is None:
        photos = [cut["photo"] for cut in json.loads((FIXTURE / "ctc_readings.json").read_text())]
        return np.load(FIXTURE / "ctc_logits.npy"), photos
    stored = np.load(path)
    return stored["logits"], stored["photos"].tolist()


def ms_per_cut(decoders: dict[str, ModuleType], logits: np.ndarray, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in decoders}
    for _ in range(rounds):
        for name, decoder in decoders.items():
            decoder.is_plate_prefix.cache_clear()
            start = time.process_time()
            decoder.read_plates(logits)
            times[name].append(time.process_time() - start)
    return {name: statistics.median(spent) / len(logits) * 1000 for name, spent in times.items()}


def compare(baseline: list[ctc.Reading], current: list[ctc.Reading]) -> str:
    same_texts = same = 0
    largest = 0.0
    for old, new in zip(baseline, current):
        if [text for text, _ in old.candidates] != [text for text, _ in new.candidates]:
            continue
        same_texts += 1
        same += old.candidates == new.candidates
        for (_, p_old), (_, p_new) in zip(old.candidates, new.candidates):
            largest = max(largest, abs(p_new - p_old) / p_old if p_old else abs(p_new))
    return (
        f"{len(current)} cuts: {same_texts} with the same texts in the same order, {same} also bit-identical; "
        f"largest relative probability difference {largest:.2g}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="an older ctc.py to time and compare with")
    parser.add_argument("--logits", type=Path, help="cuts from benchmarks/store_ctc_logits.py --all")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    logits, photos = load_cuts(args.logits)
    car = logits[[i for i, photo in enumerate(photos) if photo == "samples/car.jpg"]]
    decoders = {"current": ctc}
    if args.baseline:
        decoders = {"baseline": load_module(args.baseline), **decoders}
        print("readings:", compare(decoders["baseline"].read_plates(logits), ctc.read_plates(logits)))
    print(f"median of {args.rounds} rounds, ms per cut")
    for what, cuts in ((f"car.jpg, {len(car)} cuts", car), (f"all {len(logits)} cuts", logits)):
        times = ms_per_cut(decoders, cuts, args.rounds)
        figures = "  ".join(f"{name} {ms:.3f}" for name, ms in times.items())
        ratio = f"  speed-up {times['baseline'] / times['current']:.1f}x" if args.baseline else ""
        print(f"{what:<20} {figures}{ratio}")


if __name__ == "__main__":
    main()
