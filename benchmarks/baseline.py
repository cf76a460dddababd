"""What the before-and-after tools (heal_times.py, first_request.py) share: another checkout of plates run beside
this one (main's, exported with `git archive`), and CPU-heavy jobs beside the server, as a shared machine has."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
