"""How long each command takes to answer and how much memory it takes at its peak: every `--help`, and with --url
`plates-client car.jpg` against that server. Each runs --repeats times as a fresh process; the median wall time and
the largest peak resident set (the kernel's maxrss of that process, from wait4) are printed.

    poetry run python benchmarks/command_startup.py [--url localhost:8000] [--tree ../other-checkout]

--tree runs another checkout's `plates` package with this environment's Python (for a before/after in one run):
commands are started as `python -c` on the entry points of pyproject.toml, so both trees are measured the same way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from plates.build.paths import shared_dir

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = shared_dir() / "data" / "samples"
ENTRY_POINTS = {"plates": "plates.cli.main", "plates-client": "plates.cli.client"}


def commands(url: str | None) -> list[list[str]]:
    listed = [
        ["plates-client", "--help"],
        ["plates", "--help"],
        ["plates", "watch", "--help"],
        ["plates", "gateway", "--help"],
        ["plates", "eval", "--help"],
        ["plates", "bench", "--help"],
        ["plates", "serve", "--help"],
    ]
    if url:
        listed.append(["plates-client", str(SAMPLES / "car.jpg"), "--url", url])
    return listed


def run_once(tree: Path, command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one run of `command`, its package taken from `tree`."""
    module = ENTRY_POINTS[command[0]]
    code = f"import sys; sys.argv = {command!r}; from {module} import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {tree}: {process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server for `plates-client car.jpg`")
    parser.add_argument("--tree", type=Path, action="append", help="another checkout to measure beside this one")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    trees = [PROJECT_ROOT, *(path.resolve() for path in args.tree or [])]
    print(f"{'command':<34}" + "".join(f"{tree.name[:22]:>24}" for tree in trees))
    for command in commands(args.url):
        cells = []
        for tree in trees:
            runs = [run_once(tree, command) for _ in range(args.repeats)]
            wall = statistics.median(run[0] for run in runs)
            memory = max(run[1] for run in runs)
            cells.append(f"{wall:9.2f} s {memory:7.0f} MB")
        shown = " ".join(command).replace(str(SAMPLES) + "/", "")
        print(f"{shown[:34]:<34}" + "".join(f"{cell:>24}" for cell in cells), flush=True)


if __name__ == "__main__":
    main()
