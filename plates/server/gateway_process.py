"""`plates gateway` as a process beside Triton, started and watched by the supervisor (the image, `plates serve`).

The gateway is the only thing published; Triton listens behind it. It runs in a process of its own, not in a thread
of the supervisor, so that a stuck event loop or a leak in it never stops the health checks that watch Triton, and
its exit is seen at the next check.
"""

from __future__ import annotations

import sys
from pathlib import Path

from plates.server.process import ChildProcess


class GatewayProcess(ChildProcess):
    """One gateway: its flags are `args`; what they leave out comes from the PLATES_GATEWAY_* variables."""

    def __init__(self, args: list[str] | None = None, log_file: Path | None = None) -> None:
        super().__init__([sys.executable, "-m", "plates.cli.main", "gateway", *(args or [])], log_file=log_file)
