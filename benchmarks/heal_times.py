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
    poetry run python benchmarks/heal_times.py --modes load --clients grpc --models yolo --busy 1
    poetry run python benchmarks/heal_times.py --container NAME [--engine "podman --runtime runc"]

With --container, the same on a running container of the serving image instead, its ports published (scripts/
test-image.sh leaves one with PLATES_IMAGE_KEEP=1): its stubs are killed through the engine's `exec`, timed by the
container's clock (the host's), and its restart count and start time say whether Triton was kept.

--busy N runs N processes that each keep a core busy beside the servers, for the whole run.

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

from baseline import baseline_python, busy_beside  # noqa: E402
from conftest import SAMPLES, CarLoad  # noqa: E402

from plates.client.health import deep_check  # noqa: E402
from plates.client.readiness import wait_for_server  # noqa: E402
from plates.inference.stubs import stubs  # noqa: E402
from plates.server.launcher import free_port  # noqa: E402
from plates.server.process_memory import server_processes  # noqa: E402

MODELS = ("yolo", "stn", "lprnet", "plate_recognition")
KINDS = ("grpc", "http", "gateway")
MODES = {
    "load": {"clients": 4, "pauses": False, "pause_s": 0.0},
    "idle": {"clients": 1, "pauses": False, "pause_s": 0.1},
}
SETTLE_S = 2.0  # of traffic before each kill, once the server is healthy
PORTS = {"http": "8000", "grpc": "8001", "gateway": "8080"}  # the image's, inside its container


class Serve:
    """`plates serve` of the checkout at `tree`, run by `python`, on free ports; its output in `log`."""

    def __init__(self, name: str, tree: Path, python: str, log: Path) -> None:
        self.name, self.log = name, log
        self.ports = {name: free_port() for name in ("http", "grpc", "metrics", "gateway")}
        flags = [f"--{name}-port={port}" for name, port in self.ports.items()]
        with log.open("w") as output:
            self.process = subprocess.Popen(
                [python, "-m", "plates.cli.main", "serve", *flags], cwd=tree, stdout=output, stderr=subprocess.STDOUT
            )
        self.url = f"localhost:{self.ports['http']}"
        self.at = {
            "http": self.url,
            "grpc": f"127.0.0.1:{self.ports['grpc']}",
            "gateway": f"127.0.0.1:{self.ports['gateway']}",
        }

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

    def kill(self, model: str) -> float:
        """SIGKILL `model`'s stub; when (time.monotonic())."""
        [pid] = [process.pid for name, process in stubs(self.triton()) if name == model]
        os.kill(pid, signal.SIGKILL)
        return time.monotonic()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Container:
    """A running container of the serving image, its ports published (scripts/test-image.sh with
    PLATES_IMAGE_KEEP=1 leaves one): its stubs are killed through the engine, and its Triton is the same as long as
    the container is (its restart count and start time). The gateway's key is the first of its PLATES_GATEWAY_KEYS."""

    name = "image"

    def __init__(self, engine: list[str], container: str) -> None:
        self.engine, self.container = engine, container
        published = {name: self.run("port", container, port).splitlines()[0] for name, port in PORTS.items()}
        self.at = {name: address.replace("0.0.0.0", "127.0.0.1") for name, address in published.items()}
        self.url = self.at["http"]
        environment = self.inspect("{{range .Config.Env}}{{println .}}{{end}}").splitlines()
        keys = [line.split("=", 1)[1] for line in environment if line.startswith("PLATES_GATEWAY_KEYS=")]
        if keys and keys[0]:
            os.environ["PLATES_GATEWAY_KEY"] = keys[0].split(",")[0]  # for the gateway's clients (tests/conftest.py)

    def run(self, *args: str) -> str:
        return subprocess.run([*self.engine, *args], capture_output=True, text=True, check=True).stdout.strip()

    def inspect(self, template: str) -> str:
        return self.run("inspect", "--format", template, self.container)

    def wait_healthy(self, timeout: float) -> None:
        """Until every model answers its probe (the supervisor's verdict stays inside the container)."""
        deadline = time.monotonic() + timeout
        while not deep_check(self.url, timeout=5).healthy:
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.container}: not healthy after {timeout:.0f} s")
            time.sleep(0.2)

    def triton(self) -> str:
        return self.inspect("{{.RestartCount}} {{.State.StartedAt}}")

    def kill(self, model: str) -> float:
        """SIGKILL `model`'s stub with the container's own shell (it has no procps; the bracket keeps the shell from
        matching itself); when (time.monotonic()), from the container's clock, the host's: the engine's `exec` takes
        a while to start."""
        pattern = f"/{model[:-1]}[{model[-1]}]/1/model\\."
        script = (
            f'for p in /proc/[0-9]*; do if tr "\\0" " " < "$p/cmdline" 2>/dev/null | grep -q "{pattern}"; '
            'then kill -9 "${p#/proc/}"; date +%s.%N; fi; done'
        )
        [killed] = self.run("exec", self.container, "sh", "-c", script).split()
        return float(killed) - (time.time() - time.monotonic())

    def stop(self) -> None:
        pass  # the script that started it removes it


def kill_and_time(
    serve: Serve | Container, model: str, kind: str, mode: str, photo: bytes, within: float
) -> tuple[float | None, str]:
    """Kill `model`'s stub under `mode`'s clients of `kind`: seconds to their first right answer (None past
    `within`), and a line on what happened."""
    serve.wait_healthy(600)
    load = CarLoad(serve.at[kind], photo, kind=kind, **MODES[mode])
    try:
        load.first_right_since(time.monotonic(), 120)
        time.sleep(SETTLE_S)
        triton = serve.triton()
        killed = serve.kill(model)
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
    return seconds, f"{serve.name:9} {mode:4} {kind:7} {model:17} {said}  {restarted}; meanwhile {dict(met)}"


def beside(processes: int = 5, seconds: float = 2.0) -> str:
    """The machine's load and its busiest processes over `seconds`: what ran beside the measurement."""
    everyone = list(psutil.process_iter(["cmdline"]))
    for process in everyone:
        try:
            process.cpu_percent(None)
        except psutil.Error:
            pass
    time.sleep(seconds)
    usage = []
    for process in everyone:
        try:
            usage.append((process.cpu_percent(None), " ".join(process.info["cmdline"] or [])[:110]))
        except psutil.Error:
            continue
    lines = [f"  {percent:5.0f} %  {command}" for percent, command in sorted(usage, reverse=True)[:processes]]
    return f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; busiest processes:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in turns with this one (main's)")
    parser.add_argument("--modes", nargs="+", choices=sorted(MODES), default=list(MODES))
    parser.add_argument("--clients", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--within", type=float, default=120.0, help="seconds to wait for a right answer (default 120)")
    parser.add_argument("--container", help="time this running container of the image instead of a plates serve")
    parser.add_argument("--engine", default="podman", help="the container engine command (default podman)")
    parser.add_argument("--busy", type=int, default=0, help="CPU-heavy jobs to run beside the servers (default 0)")
    args = parser.parse_args(argv)
    with busy_beside(args.busy):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    photo = (SAMPLES / "car.jpg").read_bytes()
    folder = Path(tempfile.mkdtemp(prefix="heal-times-"))
    print(beside(), flush=True)
    if args.container:
        servers = [Container(args.engine.split(), args.container)]
    else:
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
