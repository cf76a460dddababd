"""`plates gateway` as a process beside Triton, started and watched by the supervisor (the image, `plates serve`).

The gateway is the only thing published; Triton listens behind it. It runs in a process of its own, not in a thread
of the supervisor, so that a stuck event loop or a leak in it never stops the health checks that watch Triton, and
its exit is seen at the next check. Its settings are checked here first, so that a gateway that would refuse to
start (no API keys for a public address) stops the supervisor before Triton is started for nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plates.exceptions import SettingsError
from plates.gateway.settings import add_arguments, settings_from
from plates.server.child_process import ChildProcess


class GatewayProcess(ChildProcess):
    """One gateway: its flags are `args`; what they leave out comes from the PLATES_GATEWAY_* variables.
    SettingsError, as the gateway would exit with, for settings it would refuse."""

    def __init__(self, args: list[str] | None = None, log_file: Path | None = None) -> None:
        args = list(args or [])
        parser = argparse.ArgumentParser(prog="plates gateway", exit_on_error=False)
        add_arguments(parser)
        try:
            settings_from(parser.parse_args(args))
        except argparse.ArgumentError as error:  # a PLATES_GATEWAY_* variable of the wrong type
            raise SettingsError(f"gateway {error}") from error
        super().__init__([sys.executable, "-m", "plates.cli.main", "gateway", *args], log_file=log_file)
