"""Start the `tritonserver` binary of the nvidia-pytriton wheel on the model repository, on the CPU.

That wheel ships Triton 2.51 with the Python backend only. Models that say `backend: "pytorch"` are served by the
project's Python stand-in (`backends/pytorch/model.py`) unless the backend directory has the real backend.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from plates.exceptions import ServerUnavailableError
from plates.export import DEFAULT_REPOSITORY
from plates.readiness import wait_for_server
from plates.weights import PROJECT_ROOT

STAND_IN_BACKENDS = PROJECT_ROOT / "backends"
# Triton's own default: how long it lets in-flight requests finish on SIGTERM.
EXIT_TIMEOUT_S = 30


def pytriton_dir() -> Path:
    try:
        import pytriton
    except ImportError as error:
        raise ServerUnavailableError(
            "no local Triton: the nvidia-pytriton wheel is not installed (poetry install --with local)"
        ) from error
    return Path(pytriton.__file__).resolve().parent


def assemble_backends(target: Path) -> Path:
    """A backend directory: the wheel's Python backend with the stub for this Python, and the PyTorch stand-in."""
    server = pytriton_dir() / "tritonserver"
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


def server_environment() -> dict[str, str]:
    """Let the wheel's binary find its libraries, and the stub this interpreter's libpython and packages."""
    env = dict(os.environ)
    libs = [sysconfig.get_config_var("LIBDIR") or "", str(pytriton_dir().parent / "nvidia_pytriton.libs")]
    env["LD_LIBRARY_PATH"] = os.pathsep.join([*libs, env.get("LD_LIBRARY_PATH", "")]).strip(os.pathsep)
    # The stub embeds Python in isolated mode: it ignores PYTHONPATH, but derives its prefix from the first
    # `python3` on PATH, and so takes this interpreter's virtual environment when its bin/ comes first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


@dataclass
class LocalServer:
    repository: Path = DEFAULT_REPOSITORY
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    log_file: Path | None = None
    process: subprocess.Popen | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"localhost:{self.http_port}"

    def command(self, backend_dir: Path) -> list[str]:
        return [
            str(pytriton_dir() / "tritonserver" / "bin" / "tritonserver"),
            f"--model-repository={self.repository}",
            f"--backend-directory={backend_dir}",
            f"--http-port={self.http_port}",
            f"--grpc-port={self.grpc_port}",
            f"--metrics-port={self.metrics_port}",
            "--strict-readiness=true",
            f"--exit-timeout-secs={EXIT_TIMEOUT_S}",
        ]

    def start(self, wait_until_ready: bool = True, timeout: float = 300.0) -> "LocalServer":
        self._workdir = tempfile.TemporaryDirectory(prefix="plates-triton-")
        backend_dir = assemble_backends(Path(self._workdir.name) / "backends")
        output = self.log_file.open("ab") if self.log_file else None
        self.process = subprocess.Popen(
            self.command(backend_dir), env=server_environment(), stdout=output, stderr=subprocess.STDOUT
        )
        if wait_until_ready:
            try:
                wait_for_server(self.url, timeout=timeout, alive=lambda: self.process.poll() is None)
            except ServerUnavailableError:
                self.stop()
                raise
        return self

    def stop(self) -> int | None:
        """SIGTERM, then wait for Triton to drain; kill it only if it outstays its own exit timeout."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=EXIT_TIMEOUT_S + 10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._workdir.cleanup()
        return self.process.returncode

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
