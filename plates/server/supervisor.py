"""Watch a Triton server with the deep health check and act when it fails: the same watch for `plates serve` and
the serving image.

Triton 2.51 never restarts a Python model's stub that died, and keeps saying ready. Every `interval` seconds the
supervisor asks every model for an answer (plates.server.health), except those that served client requests without
a failure since its last check; after `failures` failed checks in a row it kills the server with its stubs and
removes their shared memory, then either starts it again (`plates serve`) or exits non-zero so that the container's
restart policy, or Kubernetes, starts a fresh one (the image). With the defaults a dead stub is noticed within
interval * failures + the check's timeout = 15 s, or one interval later where the check just before the kill
counted the model's traffic.

The image runs it as its command, in front of tritonserver:

    python3 -m plates.server.supervisor --gateway -- tritonserver --model-repository=... [flags]

It adds the flags of plates.server.options and a shared-memory prefix of its own, forwards SIGTERM (Triton drains,
and the supervisor exits with Triton's code), and exits 1 when the server fails its health check. With --gateway it
also runs `plates gateway`, the published API, and exits 1 when the gateway exits: one container, one process tree
and one restart policy for both.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol

from plates.exceptions import ServerUnavailableError, SettingsError
from plates.readiness import wait_for_server
from plates.server.health import HealthReport, TrafficAwareCheck
from plates.server.options import serving_flags
from plates.server.gateway_process import GatewayProcess
from plates.server.process import EXIT_TIMEOUT_S, ChildProcess, TritonProcess, new_shm_prefix, shm_flag

INTERVAL_S = 5.0
FAILURES = 2
CHECK_TIMEOUT_S = 5.0
READY_TIMEOUT_S = 300.0


class Server(Protocol):
    url: str

    def start(self, wait_until_ready: bool = True, timeout: float = READY_TIMEOUT_S) -> object: ...

    def wait_until_ready(self, timeout: float = READY_TIMEOUT_S) -> None: ...

    def kill(self) -> None: ...

    @property
    def alive(self) -> bool: ...


@dataclass
class Supervisor:
    server: Server
    heal: bool  # restart the server (plates serve); else stop watching and report the failure (the image)
    interval: float = INTERVAL_S
    failures: int = FAILURES
    check: Callable[[str], HealthReport] = field(default_factory=lambda: TrafficAwareCheck(CHECK_TIMEOUT_S))
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
    # The public API in front of the server (plates gateway): started again if it exits when healing, else its exit
    # ends the watch as a failed server's does.
    gateway: ChildProcess | None = None

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self.restarts = 0

    def run(self) -> int:
        """Watch until stop() (0), or until the server fails and cannot be healed here (1)."""
        while not self.stopping.is_set():
            reason = self._watch()
            if reason is None:
                return 0
            self.log(f"supervisor: {reason}")
            self.server.kill()
            if not self.heal:
                if self.gateway is not None:
                    self.gateway.kill()
                self.log("supervisor: server killed; exiting for a fresh start")
                return 1
            self.restarts += 1
            self.log(f"supervisor: restarting Triton (restart {self.restarts})")
            try:
                self.server.start(wait_until_ready=True, timeout=READY_TIMEOUT_S)
            except ServerUnavailableError as error:
                self.log(f"supervisor: the restarted server did not become ready: {error}")
                return 1
            self.log(f"supervisor: Triton is ready again at {self.server.url}")
        return 0

    def _watch(self) -> str | None:
        """None once stop() is called; else why the server must go."""
        failed = 0
        while not self.stopping.wait(self.interval):
            if self.gateway is not None and not self.gateway.alive:
                exited = f"the gateway exited with code {self.gateway.returncode}"
                if not self.heal:
                    return exited
                self.log(f"supervisor: {exited}; starting it again")
                self.gateway.start()
            if not self.server.alive:
                return "tritonserver exited"
            report = self.check(self.server.url)
            if report.healthy:
                failed = 0
                continue
            failed += 1
            self.log(f"supervisor: health check {failed}/{self.failures} failed: {report.summary()}")
            if failed >= self.failures:
                return f"{', '.join(m.model for m in report.failed)} failed {failed} health checks in a row"
        return None

    def stop(self) -> None:
        self.stopping.set()


class CommandServer:
    """A tritonserver command line run as given, plus this project's flags: the server inside the image."""

    def __init__(self, command: list[str], url: str) -> None:
        self.command = command
        self.url = url
        self.triton: TritonProcess | None = None

    @property
    def alive(self) -> bool:
        return self.triton is not None and self.triton.alive

    def start(self, wait_until_ready: bool = True, timeout: float = READY_TIMEOUT_S) -> "CommandServer":
        prefix = new_shm_prefix()
        self.triton = TritonProcess([*self.command, *serving_flags(), shm_flag(prefix)], prefix)
        self.triton.start()
        if wait_until_ready:
            self.wait_until_ready(timeout)
        return self

    def wait_until_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        wait_for_server(self.url, timeout=timeout, alive=lambda: self.alive)

    def kill(self) -> None:
        if self.triton is not None:
            self.triton.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m plates.server.supervisor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="localhost:8000", help="the server's HTTP endpoint, for the health check")
    parser.add_argument("--heal", action="store_true", help="restart the server instead of exiting 1")
    parser.add_argument(
        "--gateway", action="store_true", help="also run plates gateway (configured by PLATES_GATEWAY_* variables)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- tritonserver [flags]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the server's command after --")

    server = CommandServer(command, args.url)
    # The gateway answers 503 until Triton is ready, and its /readyz says so.
    try:
        gateway = GatewayProcess().start() if args.gateway else None
    except SettingsError as error:
        print(f"supervisor: the gateway cannot start: {error}", file=sys.stderr, flush=True)
        return error.exit_code
    supervisor = Supervisor(server, heal=args.heal, gateway=gateway)
    server.start(wait_until_ready=False)

    def drain(signum: int, frame: object) -> None:
        supervisor.stop()
        for process in (server.triton, gateway):
            if process is not None:
                process.signal_stop()

    signal.signal(signal.SIGTERM, drain)
    signal.signal(signal.SIGINT, drain)
    try:
        server.wait_until_ready(READY_TIMEOUT_S)
    except ServerUnavailableError as error:
        if not supervisor.stopping.is_set():
            print(f"supervisor: {error}", file=sys.stderr, flush=True)
            server.kill()
            if gateway is not None:
                gateway.kill()
            return 1
    if supervisor.run() != 0:
        return 1
    # Stopped by a signal, already passed on: Triton drains within its --exit-timeout-secs; its code is the
    # container's. A second SIGTERM would cut the drain short, so this only waits.
    code = server.triton.finish(EXIT_TIMEOUT_S + 5)
    if gateway is not None:
        gateway.finish(EXIT_TIMEOUT_S + 5)
    return code


if __name__ == "__main__":
    sys.exit(main())
