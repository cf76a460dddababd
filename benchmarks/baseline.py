"""What the before-and-after tools (heal_times.py, first_request.py, against_baseline.py) share: another checkout of
plates run beside this one (main's, exported with `git archive`), a server of either started, and CPU-heavy jobs
beside the server, as a shared machine has."""

from __future__ import annotations

import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import requests

from plates.client.service import PlatesClient
from plates.server.launcher import free_port


def baseline_python(tree: Path) -> str:
    """The python of a virtual environment in `tree` that imports `tree`'s plates and this environment's other
    packages. Triton's stubs take their packages from the first python3 on PATH (plates.server.launcher), which a
    server started by this python makes its own: so the baseline's stubs run the baseline's code too."""
    venv = tree / ".venv-baseline"
    if not (venv / "bin" / "python").exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
        where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        site = subprocess.run([venv / "bin" / "python", "-c", where], capture_output=True, text=True, check=True)
        # Path lines only: the .pth files of a folder added this way are not read, this checkout's editable install of
        # plates among them.
        (Path(site.stdout.strip()) / "plates-baseline.pth").write_text(f"{tree}\n{sysconfig.get_paths()['purelib']}\n")
    return str(venv / "bin" / "python")


@contextmanager
def busy_beside(jobs: int) -> Iterator[None]:
    """`jobs` processes that each keep a core busy (a Python loop) for as long as the block runs: the other job a
    shared machine, a CI runner or a home server has beside the service."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(jobs)]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


# Run by the tree's own python: its launcher, its model repository (built on the first run), its flags.
BARE_SERVER = """
import signal, sys
try:
    from plates.build.repository import is_built, rebuild
except ImportError:  # a checkout from before the rooms of plates/ (82d3cc0 and older)
    from plates.export import is_built, rebuild
from plates.server.launcher import LocalServer
if not is_built():
    rebuild()
server = LocalServer(http_port=int(sys.argv[1]), grpc_port=int(sys.argv[2]), metrics_port=int(sys.argv[3]))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
try:
    server.start(wait_until_ready=False)
    signal.pause()
finally:
    server.stop()
"""
READY_WITHIN_S = 900


@dataclass
class Served:
    """A server of `tree` started by `serving`, and the ports it listens on."""

    tree: Path
    process: subprocess.Popen
    ports: dict[str, int]
    serve: bool
    started: float = field(default_factory=time.monotonic)

    @property
    def url(self) -> str:
        return f"localhost:{self.ports['http']}"

    def wait_ready(self, client: PlatesClient) -> float:
        """Seconds from the start until it is ready, polled every 50 ms: Triton's own ready through `client`, or
        with `serve`, the gateway's /readyz, as Kubernetes' probes and a user's script poll it."""
        readyz = f"http://127.0.0.1:{self.ports['gateway']}/readyz"
        while True:
            try:
                if requests.get(readyz, timeout=5).status_code == 200 if self.serve else client.ready():
                    return time.monotonic() - self.started
            except Exception:  # no server listening yet
                pass
            if self.process.poll() is not None or time.monotonic() - self.started > READY_WITHIN_S:
                raise SystemExit(f"the server of {self.tree} did not become ready")
            time.sleep(0.05)


@contextmanager
def serving(tree: Path, python: str, serve: bool = False) -> Iterator[Served]:
    """A server of the checkout `tree` run by `python` on free ports, stopped when the block ends: a bare one
    (plates.server.launcher.LocalServer: no supervisor, so nothing warms it but Triton itself), or with `serve`,
    `plates serve` (the supervisor, which warms it, and the gateway)."""
    ports = {name: free_port() for name in ("http", "grpc", "metrics", "gateway")}
    if serve:
        command = [python, "-m", "plates.cli.main", "serve", *(f"--{name}-port={port}" for name, port in ports.items())]
    else:
        command = [python, "-c", BARE_SERVER, *(str(ports[name]) for name in ("http", "grpc", "metrics"))]
    process = subprocess.Popen(command, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield Served(tree, process, ports, serve)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
