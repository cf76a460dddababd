"""Running another checkout of plates beside this one (main's, exported with `git archive`), for the tools that
measure it against this checkout in one run (heal_times.py, first_request.py)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
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
