"""The first look, threads, instances, plate_recognition's batcher and OpenMP's spin: the served pipeline under each
setting, timed on the same photo in the same run.

Each setting is a copy of the model repository with a few config lines changed (the first look on or off, STN and
LPRNet threads, the detector's threads, yolo instances, plate_recognition's dynamic batcher on or off), and the
server's GOMP_SPINCOUNT where it names one; for each, a local server is started (no supervisor: nothing else sends
it requests), the photo's file sent at each concurrency, and the p50 latency, the throughput and the requests
slower than 0.3 s printed. The settings run in turn, twice over (A B C ... A B C ...), so that a drift in the
machine's load shows as a difference between a setting's two rounds.

    poetry run python benchmarks/compare_settings.py ../shared/data/samples/car.jpg [--requests 30] \
        [--concurrency 1 2 4] [--rounds 2] [--settings 0 3 ...]
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

from plates.client.retry import NO_RETRY, RetryPolicy
from plates.client.threads import ThreadLocalClients
from plates.evaluation.timing import run_requests, summarize
from plates.server.candidates import copy_repository, serving

FIRST_LOOK_CUTS = r'(key: "first_look_cuts", value: \{ string_value: )"[\d ]+"'
DYNAMIC_BATCHING = r"(?s)\ndynamic_batching \{.*?\n\}\n"
STALL_S = 0.3  # a request slower than this at concurrency 1 or 2 waited out something, not a photo


@dataclass(frozen=True)
class Setting:
    torch_threads: int  # INTRA_OP_THREAD_COUNT of stn and lprnet
    detector_threads: int  # yolo's `threads`, 0: one per core
    detectors: int = 1  # yolo instances
    first_look: bool = True  # False: every cut of every plate is read
    batcher: bool = True  # False: plate_recognition without its dynamic batcher (and so without its queue bound)
    omp_spin: int | None = None  # GOMP_SPINCOUNT for the server's processes; None: plates serve's own

    def __str__(self) -> str:
        detector = self.detector_threads or "a thread per core"
        return (
            f"first look {'on' if self.first_look else 'off'}, stn and lprnet threads {self.torch_threads}, "
            f"yolo threads {detector}, yolo instances {self.detectors}"
            + ("" if self.batcher else ", plate_recognition without dynamic_batching")
            + ("" if self.omp_spin is None else f", OpenMP threads spin {self.omp_spin} turns before sleeping")
        )

    def edits(self) -> dict[str, list[tuple[str, str]]]:
        """model -> (pattern in its config.pbtxt, replacement)"""
        torch = [(r'(key: "INTRA_OP_THREAD_COUNT", value: \{ string_value: )"\d+"', rf'\1"{self.torch_threads}"')]
        return {
            "plate_recognition": ([] if self.first_look else [(FIRST_LOOK_CUTS, r'\1""')])
            + ([] if self.batcher else [(DYNAMIC_BATCHING, "")]),
            "stn": torch,
            "lprnet": torch,
            "yolo": [
                (r'(key: "threads", value: \{ string_value: )"\d+"', rf'\1"{self.detector_threads}"'),
                (r"(instance_group \[ \{ count: )\d+", rf"\g<1>{self.detectors}"),
            ],
        }


SETTINGS = (
    Setting(2, 0, first_look=False),
    Setting(2, 0),
    Setting(1, 0, first_look=False),
    Setting(1, 0),
    Setting(1, 1),
    Setting(1, 1, 2),
    Setting(2, 0, batcher=False),
    Setting(2, 0, omp_spin=0),
    Setting(2, 0, omp_spin=1000),
    Setting(2, 0, omp_spin=10000),
)


def repository_with(setting: Setting, target: Path) -> Path:
    """A copy of the model repository with the configs changed to `setting`."""
    copy_repository(target)
    for model, edits in setting.edits().items():
        config = target / model / "config.pbtxt"
        text = config.read_text()
        for pattern, replacement in edits:
            text, count = re.subn(pattern, replacement, text, count=1)
            if count != 1:
                raise SystemExit(f"{model}: {pattern!r} is not in its config")
        config.write_text(text)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("photo")
    parser.add_argument("--requests", type=int, default=30, help="per concurrency level and setting (default 30)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--settings", type=int, nargs="+", help="which settings to run, by their place in SETTINGS (default all)"
    )
    args = parser.parse_args()
    settings = [SETTINGS[i] for i in args.settings] if args.settings else SETTINGS
    data = Path(args.photo).read_bytes()
    backoff = RetryPolicy()
    with tempfile.TemporaryDirectory(prefix="plates-threads-") as scratch:
        repositories = {
            setting: repository_with(setting, Path(scratch) / f"repository{i}") for i, setting in enumerate(settings)
        }
        for round in range(1, args.rounds + 1):
            for setting, repository in repositories.items():
                log = Path(scratch) / "triton.log"
                # The server inherits this process's environment, GOMP_SPINCOUNT=omp_spin where the setting names one.
                spin = {} if setting.omp_spin is None else {"GOMP_SPINCOUNT": str(setting.omp_spin)}
                with patch.dict(os.environ, spin), serving(repository, log) as server:
                    with ThreadLocalClients(server.url, timeout=60, retry=NO_RETRY) as clients:
                        for _ in range(3):
                            clients.recognize(data)
                        levels = []
                        for concurrency in args.concurrency:
                            # A refused thread waits as PlatesClient would before retrying, as in plates bench.
                            outcomes = run_requests(
                                lambda: clients.recognize(data), args.requests, concurrency, pause=backoff.pause
                            )
                            latency = summarize(outcomes.accepted, outcomes.seconds)
                            refused = f" ({len(outcomes.refused)} refused)" if outcomes.refused else ""
                            stalls = sum(seconds > STALL_S for seconds in outcomes.accepted)
                            levels.append(
                                f"c={concurrency} p50 {latency.p50_ms:.0f} ms, "
                                f"{latency.throughput:.1f} photos/s{refused}, {stalls} over {STALL_S} s"
                            )
                print(f"round {round}, {setting}: " + "; ".join(levels), flush=True)


if __name__ == "__main__":
    main()
