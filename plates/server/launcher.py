"""Start the `tritonserver` binary of the nvidia-pytriton wheel on the model repository, on the CPU.

That wheel ships Triton 2.51 with the Python backend only. Models that say `backend: "pytorch"` are served by the
project's Python stand-in (`backends/pytorch/model.py`) unless the backend directory has the real backend.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT
from plates.client.readiness import wait_for_server
from plates.exceptions import ServerUnavailableError
from plates.server.child_process import EXIT_TIMEOUT_S, TritonProcess, new_shm_prefix, shm_flag
from plates.server.options import admin_key, serving_flags

STAND_IN_BACKENDS = PROJECT_ROOT / "backends"


# Ports handed out by free_port in this process, so that two servers started side by side never get the same one.
_HANDED_OUT: set[int] = set()
# How far below the kernel's ephemeral range free_port looks.
PORT_SPAN = 12000


def ephemeral_floor(path: Path = Path("/proc/sys/net/ipv4/ip_local_port_range")) -> int:
    """The first port the kernel gives outgoing connections (Linux's default range is 32768 to 60999)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing is bound to now, for a server started beside others.

    It lies below the ephemeral range: Triton binds its ports only once its models have loaded, seconds later, and a
    port from that range may be an outgoing connection's own by then; Triton then exits, 'already in use'. Drawn by
    the system's randomness, never a seeded one, so that processes side by side draw differently.
    """
    floor = ephemeral_floor()
    low = max(1024, floor - PORT_SPAN)
    for port in random.SystemRandom().sample(range(low, floor), floor - low):
        if port in _HANDED_OUT:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise ServerUnavailableError(f"no free TCP port between {low} and {floor - 1}")


def taken_ports(host: str, ports: dict[str, int]) -> list[str]:
    """Those of `ports` (name: port) that something already listens on at `host`, as 'http 8000'. Bound as Triton
    binds, with SO_REUSEADDR: a port that only old connections linger on (TIME_WAIT, after a restart) is free."""
    taken = []
    for name, port in ports.items():
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                taken.append(f"{name} {port}")
    return taken


# How Triton's main says why it exits: a glog error line from main.cc (`E1126 10:16:36.340331 21924 main.cc:257]
# "failed to start HTTP service: ..."`), or a bare `error: creating server: ...`. Other error lines are not
# fatal: every start on a machine without CUDA logs one.
FATAL_LINE = re.compile(r'^(?:E\d{4} [\d:.]+ +\d+ main\.cc:\d+\] "?(?P<logged>.*?)"?|error: (?P<printed>.*))$')


def exit_reason(log_file: Path | None) -> str:
    """Why Triton exited, in its own last fatal words in its log; '' where it has none."""
    if log_file is None or not Path(log_file).exists():
        return ""
    reasons = [
        match.group("logged") or match.group("printed")
        for match in map(FATAL_LINE.match, Path(log_file).read_text(errors="replace").splitlines())
        if match
    ]
    return reasons[-1].strip() if reasons else ""


# A folder laid out as the wheel installs it (pytriton/tritonserver/ beside nvidia_pytriton.libs/), holding only what
# Triton needs: the bundle that travels to a machine without the project's environment (plates.gpu_check.bundle).
TRITON_BUNDLE_VARIABLE = "PLATES_TRITON_BUNDLE"


def pytriton_dir() -> Path:
    """The wheel's `pytriton` folder, whose tritonserver/ this project starts: $PLATES_TRITON_BUNDLE's where set,
    else the installed wheel's."""
    bundle = os.environ.get(TRITON_BUNDLE_VARIABLE)
    if bundle:
        folder = Path(bundle).resolve() / "pytriton"
        if not (folder / "tritonserver" / "bin" / "tritonserver").is_file():
            raise ServerUnavailableError(
                f"${TRITON_BUNDLE_VARIABLE} is {bundle}, which holds no pytriton/tritonserver/bin/tritonserver"
            )
        return folder
    try:
        import pytriton
    except ImportError as error:
        raise ServerUnavailableError(
            "no local Triton: the nvidia-pytriton wheel is not installed (poetry install --with local)"
        ) from error
    return Path(pytriton.__file__).resolve().parent


def assemble_backends(target: Path, pytriton: Path) -> Path:
    """A backend directory: the wheel's Python backend with the stub for this Python, and the PyTorch stand-in;
    `pytriton` is the wheel's folder of that name (pytriton_dir)."""
    server = pytriton / "tritonserver"
    python = target / "python"
    python.mkdir(parents=True)
    for item in (server / "backends" / "python").iterdir():
        shutil.copy2(item, python / item.name)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = server / "python_backend_stubs" / version / "triton_python_backend_stub"
    shutil.copy2(stub, python / stub.name)
    real_pytorch = server / "backends" / "pytorch"
    shutil.copytree(real_pytorch if real_pytorch.is_dir() else STAND_IN_BACKENDS / "pytorch", target / "pytorch")
    return target


# PyTorch's OpenMP threads (GNU OpenMP) spin 10,000 turns after each parallel region (libgomp's estimate: 0.1 ms; on
# this VM 0.5 to 3.7 ms of a core after a forward pass), then sleep:
# awake across the gaps between one forward pass's operators, where waking a sleeping thread on this VM costs more
# than a small operator (LPRNet on car.jpg's two cuts: 8.3 ms never spinning, 3.7 ms so), asleep soon after, off the
# cores the other models' processes need (docs/performance.md; the sweeps in git log). The image's Dockerfile sets
# the same.
OPENMP_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "10000"}


def server_environment(pytriton: Path | None = None) -> dict[str, str]:
    """Let the wheel's binary (in `pytriton`, pytriton_dir's by default) find its libraries, and the stub this
    interpreter's libpython and packages."""
    env = dict(os.environ)
    libs = [sysconfig.get_config_var("LIBDIR") or "", str((pytriton or pytriton_dir()).parent / "nvidia_pytriton.libs")]
    env["LD_LIBRARY_PATH"] = os.pathsep.join([*libs, env.get("LD_LIBRARY_PATH", "")]).strip(os.pathsep)
    # The stub embeds Python in isolated mode: it ignores PYTHONPATH, but derives its prefix from the first
    # `python3` on PATH, and so takes this interpreter's virtual environment when its bin/ comes first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for name, value in OPENMP_ENVIRONMENT.items():
        env.setdefault(name, value)
    return env


@dataclass
class LocalServer:
    repository: Path = DEFAULT_REPOSITORY
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    log_file: Path | None = None
    # Loopback only unless told otherwise: the server has no authentication of its own.
    host: str = "127.0.0.1"
    # The header value that opens the model-repository, shared-memory, trace and logging APIs; None: $PLATES_ADMIN_KEY,
    # else a random one, kept here for the supervisor's reloads (plates.server.options.admin_key).
    admin_key: str | None = None
    # The wheel's `pytriton` folder to start Triton from; None: pytriton_dir()'s, the installed wheel's or the bundle's
    # that $PLATES_TRITON_BUNDLE names.
    pytriton: Path | None = None
    triton: TritonProcess | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.admin_key = admin_key(self.admin_key)

    @property
    def url(self) -> str:
        host = "localhost" if self.host in ("127.0.0.1", "0.0.0.0") else self.host
        return f"{host}:{self.http_port}"

    @property
    def alive(self) -> bool:
        return self.triton is not None and self.triton.alive

    @property
    def process(self):
        return None if self.triton is None else self.triton.process

    @property
    def pid(self) -> int | None:
        return None if self.triton is None else self.triton.pid

    def command(self, backend_dir: Path, shm_prefix: str) -> list[str]:
        return [
            str((self.pytriton or pytriton_dir()) / "tritonserver" / "bin" / "tritonserver"),
            f"--model-repository={self.repository}",
            f"--backend-directory={backend_dir}",
            f"--http-address={self.host}",
            f"--grpc-address={self.host}",
            f"--metrics-address={self.host}",
            f"--http-port={self.http_port}",
            f"--grpc-port={self.grpc_port}",
            f"--metrics-port={self.metrics_port}",
            "--strict-readiness=true",
            f"--exit-timeout-secs={EXIT_TIMEOUT_S}",
            *serving_flags(self.admin_key),
            shm_flag(shm_prefix),
        ]

    def start(self, wait_until_ready: bool = True, timeout: float = 300.0) -> LocalServer:
        """Start tritonserver (again, after stop() or kill()), each time with a fresh shared-memory prefix."""
        ports = {"http": self.http_port, "grpc": self.grpc_port, "metrics": self.metrics_port}
        taken = taken_ports(self.host, ports)
        if taken:
            raise ServerUnavailableError(f"cannot serve on {self.host}: port already in use ({', '.join(taken)})")
        pytriton = self.pytriton or pytriton_dir()
        if getattr(self, "_workdir", None) is None:
            self._workdir = tempfile.TemporaryDirectory(prefix="plates-triton-")
            self._backends = assemble_backends(Path(self._workdir.name) / "backends", pytriton)
        prefix = new_shm_prefix()
        self.triton = TritonProcess(
            self.command(self._backends, prefix), prefix, env=server_environment(pytriton), log_file=self.log_file
        )
        self.triton.start()
        if wait_until_ready:
            try:
                self.wait_until_ready(timeout)
            except ServerUnavailableError:
                self.stop()
                raise
        return self

    def wait_until_ready(self, timeout: float = 300.0) -> None:
        try:
            wait_for_server(self.url, timeout=timeout, alive=lambda: self.alive)
        except ServerUnavailableError as error:
            if self.alive:
                raise
            reason = exit_reason(self.log_file) or "its output says why"
            raise ServerUnavailableError(
                f"tritonserver for {self.url} exited with code {self.triton.returncode} before it was ready: {reason}"
            ) from error

    def kill(self) -> None:
        """Kill the server and its stubs now, without draining: for a server that can no longer serve."""
        if self.triton is not None:
            self.triton.kill()

    def stop(self) -> int | None:
        """SIGTERM, then wait for Triton to drain; kill it only if it outstays its own exit timeout."""
        if self.triton is None:
            return None
        code = self.triton.stop()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
        return code

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
