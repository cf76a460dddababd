"""How often the orchestrator calls the readers: over the manifests' photos, in one process (the served code,
plates.inference.in_process), the rounds of calls to stn and lprnet / lprnet_rows and the cuts they read, as the
crops are and negated (plates.inference.pipeline.read_ways), and on how many photos each happened. A round costs the
served reader a few ms beyond its cuts, and a cut 3 to 4 ms on this machine's CPUs (docs/performance.md, Latency):
a change that reads more or fewer cuts shows here without the noise of timing it.

    poetry run python benchmarks/reader_rounds.py ../shared/data/e2e.json runs/by_eye/test.json \
        [--set plate_recognition:inverted_below=0]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from compare_parameters import changed_repository

import plates.inference.pipeline as pipeline
from plates.build.paths import DEFAULT_REPOSITORY
from plates.evaluation.manifests import load_manifest
from plates.inference.in_process import InProcessPipeline


class CountingReader(pipeline.CutReader):
    """A CutReader that counts, in `tally`, its rounds and the cuts read in them, by whether they were negated."""

    tally: Counter = Counter()

    def read(self, cuts: Sequence[int]) -> list:
        missing = [cut for cut in dict.fromkeys(cuts) if cut not in self.readings]
        if missing:
            way = "negated" if self.inverted else "as they are"
            self.tally["rounds", way] += 1
            self.tally["cuts", way] += len(missing)
            self.tally["two-line cuts", way] += int((self.rows_of_cut[missing] == 2).sum())
        return super().read(cuts)


def count(repository: Path, photos: list[bytes]) -> Counter:
    """The tally of reading every photo once on `repository`, with "photos" for each way counted where it read."""
    # read_ways makes its readers by this name: every reader the served code makes then counts.
    pipeline.CutReader = CountingReader
    reader = InProcessPipeline(repository)
    tally = CountingReader.tally = Counter()
    for data in photos:
        before = Counter(tally)
        reader.recognize(data)
        for way in ("as they are", "negated"):
            tally["photos", way] += tally["rounds", way] > before["rounds", way]
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+", help="manifests or YOLO folders whose photos are read")
    parser.add_argument("--set", nargs="*", default=[], metavar="MODEL:KEY=VALUE", help="parameters changed too")
    args = parser.parse_args()

    files = list(dict.fromkeys(Path(photo.image) for path in args.manifests for photo in load_manifest(path)))
    photos = [file.read_bytes() for file in files]
    repositories = {"committed": DEFAULT_REPOSITORY}
    with tempfile.TemporaryDirectory() as folder:
        if args.set:
            repositories["changed"] = changed_repository(Path(folder) / "model_repository", args.set)
        tallies = {name: count(repository, photos) for name, repository in repositories.items()}
    print(f"{len(photos)} photos" + (f"; changed: {' '.join(args.set)}" if args.set else ""))
    for name, tally in tallies.items():
        for way in ("as they are", "negated"):
            print(
                f"  {name}, crops {way}: {tally['rounds', way]} rounds, {tally['cuts', way]} cuts "
                f"({tally['two-line cuts', way]} of two-line plates), on {tally['photos', way]} photos"
            )


if __name__ == "__main__":
    main()
