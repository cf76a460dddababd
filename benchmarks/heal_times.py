"""From a model's death to the clients' first right answer: the figures of docs/health.md (Healing).

For each of yolo, stn, lprnet and plate_recognition, its stub is killed with SIGKILL under `plates serve` while
clients send car.jpg, and the time from the kill to the first right answer (B840CK197, to a request sent after the
kill) is measured at the clients: over gRPC (tritonclient), over HTTP (PlatesClient) and through the gateway (its
Snapshot API), each kind in turn; with 4 clients sending without pause, not even after an error ("load"), and with
one client sending every 0.1 s ("idle"). Clients connect before the kill and keep their connection, as a service's
clients do.

With --baseline, the same on another checkout's `plates serve` (main's, exported with `git archive`), kill by kill
in turns with this one's, so that both meet the same machine; each runs on ports of its own. The baseline runs in a
virtual environment of its own beside it (made here: this environment's packages, the baseline's `plates`), so
that its Triton stubs import its code, not this checkout's. Its model repository is built by its own `plates serve`
on the first run.

    git archive 6a31a35 | tar -x -C /tmp/plates-main     # into an empty folder
    poetry run python benchmarks/heal_times.py --baseline /tmp/plates-main
    poetry run python benchmarks/heal_times.py --modes idle --clients grpc --models yolo

Prints a line per kill (what the clients met until their first right answer, and whether Triton was restarted),
then the table: each kill's seconds here beside the baseline's.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from baseline import baseline_python  # noqa: E402
from conftest import SAMPLES, CarLoad  # noqa: E402

from plates.readiness import wait_for_server  # noqa: E402
from plates.server.health import deep_check  # noqa: E402
from plates.server.launcher import free_port  # noqa: E402
from plates.server.processes import server_processes, stubs  # noqa: E402

MODELS = ("yolo", "stn", "lprnet", "plate_recognition")
KINDS = ("grpc", "http", "gateway")
MODES = {"load": {"clients": 4, "pauses": False, "pause_s": 0.0}, "idle": {"clients": 1, "pauses": False, "pause_s": 0.1}}
SETTLE_S = 2.0  # of traffic before each kill, once the server is healthy


class Serve:
    """`plates serve` of the checkout at `tree`, run by `python`, on free ports; its output in `log`."""

    def __init__(self, name: str, tree: Path, python: str, log: Path) -> None:
        self.name, self.log = name, log
        self.ports = {name: free_port() for name in ("http", "grpc", "metrics", "gateway")}
        flags = [f"--{name}-port={port}" for name, port in self.ports.items()]
        with log.open("w") as output:
            self.process = subprocess.Popen([python, "-m", "plates.cli.main", "serve", *flags], cwd=tree,
                                            stdout=output, stderr=subprocess.STDOUT)  # fmt: skip
        self.url = f"localhost:{self.ports['http']}"
        self.at = {"http": self.url, "grpc": f"127.0.0.1:{self.ports['grpc']}",
                   "gateway": f"127.0.0.1:{self.ports['gateway']}"}  # fmt: skip

    def wait_healthy(self, timeout: float) -> None:
        """Until Triton says ready and its supervisor's verdict is healthy (after a start, a reload or a restart)."""
        deadline = time.monotonic() + timeout
        wait_for_server(self.url, timeout=timeout, alive=lambda: self.process.poll() is None)
        while not deep_check(self.url, timeout=5).healthy:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"{self.name}: not healthy after {timeout:.0f} s; see {self.log}")
            time.sleep(0.2)

    def triton(self) -> int:
        return server_processes(self.url)[0].pid

    def stub(self, model: str) -> int:
        [pid] = [process.pid for name, process in stubs(self.triton()) if name == model]
        return pid

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def kill_and_time(serve: Serve, model: str, kind: str, mode: str, photo: bytes, within: float) -> tuple[float | None, str]:
    """Kill `model`'s stub under `mode`'s clients of `kind`: seconds to their first right answer (None past
    `within`), and a line on what happened."""
    serve.wait_healthy(600)
    load = CarLoad(serve.at[kind], photo, kind=kind, **MODES[mode])
    try:
        load.first_right_since(time.monotonic(), 120)
        time.sleep(SETTLE_S)
        triton = serve.triton()
        os.kill(serve.stub(model), signal.SIGKILL)
        killed = time.monotonic()
        try:
            seconds = load.first_right_since(killed, within).answered - killed
        except AssertionError:
            seconds = None
        met = Counter(a.kind for a in load.since(killed) if seconds is None or a.answered <= killed + seconds)
    finally:
        load.stop()
    serve.wait_healthy(600)
    restarted = "Triton restarted" if serve.triton() != triton else "Triton kept"
    said = "over" if seconds is None else f"{seconds:5.1f} s"
    return seconds, f"{serve.name:8} {mode:4} {kind:7} {model:17} {said}  {restarted}; meanwhile {dict(met)}"


def beside(processes: int = 5) -> str:
    """The busiest processes of the machine now, and its load: what ran beside the measurement."""
    busy = sorted(psutil.process_iter(["cmdline", "cpu_percent"]), key=lambda p: p.info["cpu_percent"] or 0)
    for process in busy:
        process.info["cpu_percent"] = process.cpu_percent(None)
    time.sleep(2)
    busy = sorted(psutil.process_iter(["cmdline"]), key=lambda p: p.cpu_percent(None), reverse=True)[:processes]
    lines = [f"  {p.cpu_percent(None):5.0f} %  {' '.join(p.info['cmdline'] or [])[:110]}" for p in busy]
    return f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; busiest processes:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in turns with this one (main's)")
    parser.add_argument("--modes", nargs="+", choices=sorted(MODES), default=list(MODES))
    parser.add_argument("--clients", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--within", type=float, default=120.0, help="seconds to wait for a right answer (default 120)")
    args = parser.parse_args(argv)
    photo = (SAMPLES / "car.jpg").read_bytes()
    folder = Path(tempfile.mkdtemp(prefix="heal-times-"))
    print(beside(), flush=True)
    servers = [Serve("this", ROOT, sys.executable, folder / "this.log")]
    if args.baseline:
        tree = args.baseline.resolve()
        servers.insert(0, Serve("baseline", tree, baseline_python(tree), folder / "baseline.log"))
    print(f"logs in {folder}", flush=True)
    rows: dict[tuple[str, str, str], dict[str, float | None]] = {}
    try:
        for mode in args.modes:
            for kind in args.clients:
                for model in args.models:
                    for serve in servers:
                        seconds, line = kill_and_time(serve, model, kind, mode, photo, args.within)
                        rows.setdefault((mode, kind, model), {})[serve.name] = seconds
                        print(line, flush=True)
    finally:
        for serve in servers:
            serve.stop()
    print(beside(), flush=True)
    names = [serve.name for serve in servers]
    print(f"\nseconds from the kill to the first right answer ({', '.join(names)}):")
    print(f"{'mode':5} {'clients':8} {'model':18} " + " ".join(f"{n:>9}" for n in names))
    for (mode, kind, model), seconds in rows.items():
        cells = [f"{seconds[n]:9.1f}" if seconds.get(n) is not None else f"{'over':>9}" for n in names]
        print(f"{mode:5} {kind:8} {model:18} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
