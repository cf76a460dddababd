"""Watch a Triton server and heal it: the same watch for `plates serve` and the serving image.

Triton 2.51 never restarts a Python model's stub that died, and keeps saying ready. So every `tick` the supervisor
looks at the stubs of the models that had one when the server became ready (its children): one that has exited, or
is a zombie, or is gone, is a dead model, whatever the load. Every `interval` seconds it also asks every model for an
answer (plates.client.health), except those that served client requests without a failure since its last check; a
model whose failures rose without a success since then is dead even where its queue refuses the probe. A dead stub
acts at once; failed checks act after `failures` in a row. With the defaults a killed stub is acted on within
`tick` (0.5 s) of its death, and a model that fails without dying within interval * failures + the check's timeout
= 15 s.

It heals the model, not the server: it loads the dead or failing models again through Triton's model-repository API
(plates.server.repository), the models plate_recognition calls before it, and probes every model. Each load answers
once the new version has run its warm-up (model_warmup), so the model is warm before it takes a request. Triton,
its ports and every client's connection stay up meanwhile; plate_recognition answers its callers a 503 naming the
model that reloads (plates.exceptions.ReloadingError). Only when Triton itself exits, or a reload fails (the load
is refused, or the model still fails its probe after it), does the supervisor kill the server with its stubs and
their shared memory, then start it again (`plates serve`) or exit non-zero so that the container's restart policy,
or Kubernetes, starts a fresh one (the image).

A stub killed while it held a request stays a zombie under Triton 2.51, with the version it served (plates.server.
process): nothing but Triton can reap it, and Triton never does. The supervisor says so in its log; the version's
shared memory and the zombie go when the server stops.

At each tick it writes its verdict for the other callers of plates.client.health (the HEALTHCHECK, the gateway's
/readyz and so the Kubernetes probes): "starting" until a fresh server is warm (plates.server.warmup, whose probes
are its first check), "reloading: why" for each model it loads again, then the last check's report, and why while it
restarts Triton.

The image runs it as its command, in front of tritonserver:

    python3 -m plates.server.supervisor --gateway -- tritonserver --model-repository=... [flags]

It adds the flags of plates.server.options and a shared-memory prefix of its own, forwards SIGTERM (Triton drains,
and the supervisor exits with Triton's code), and exits 1 when the server cannot be healed. With --gateway it also
runs `plates gateway`, the published API, and exits 1 when the gateway exits: one container, one process tree and
one restart policy for both.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import psutil

from plates.client.health import (
    EXERCISED,
    PROBE_TIMEOUT_S,
    RELOADING,
    HealthReport,
    ModelHealth,
    TrafficAwareCheck,
    probe_models,
    remove_verdict,
    write_verdict,
)
from plates.client.readiness import wait_for_server
from plates.exceptions import PlatesError, ServerUnavailableError, SettingsError
from plates.inference.stubs import exited, stubs
from plates.server.child_process import EXIT_TIMEOUT_S, ChildProcess, TritonProcess, new_shm_prefix, shm_flag
from plates.server.gateway_process import GatewayProcess
from plates.server.options import admin_key, serving_flags
from plates.server.repository import reload_model
from plates.server.warmup import warm_up

TICK_S = 0.5
INTERVAL_S = 5.0
FAILURES = 2
READY_TIMEOUT_S = 300.0
# The models plate_recognition calls come before it: its reload warms it up through them.
RELOAD_ORDER = ("yolo", "stn", "lprnet", "lprnet_rows", "plate_recognition")


STARTING = HealthReport((ModelHealth("tritonserver", False, "starting", 0.0),))


class Server(Protocol):
    url: str
    pid: int | None  # tritonserver's, whose children are the stubs
    admin_key: str  # opens its model-repository API

    def start(self, wait_until_ready: bool = True, timeout: float = READY_TIMEOUT_S) -> object: ...

    def wait_until_ready(self, timeout: float = READY_TIMEOUT_S) -> None: ...

    def kill(self) -> None: ...

    @property
    def alive(self) -> bool: ...


@dataclass(frozen=True)
class Failure:
    """Why the watch stopped: the models to load again, or none where the server itself must go."""

    reason: str
    models: tuple[str, ...] = ()
    dead: tuple[psutil.Process, ...] = ()  # their stubs that died


def to_reload(report: HealthReport) -> tuple[str, ...]:
    """The models to load again for the probes that failed: every model a failed probe exercised (a probe of
    plate_recognition also calls yolo); none where a failure is the server's own (tritonserver, supervisor)."""
    failed = [m.model for m in report.failed]
    if not failed or not all(model in EXERCISED for model in failed):
        return ()
    return in_reload_order({model for name in failed for model in EXERCISED[name]})


def in_reload_order(models: set[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(models, key=lambda m: (RELOAD_ORDER.index(m) if m in RELOAD_ORDER else len(RELOAD_ORDER), m)))


@dataclass
class Supervisor:
    server: Server
    heal: bool  # restart a server that failed (plates serve); else exit 1 for the container's restart (the image)
    interval: float = INTERVAL_S
    failures: int = FAILURES
    check: Callable[[str], HealthReport] = field(
        default_factory=lambda: TrafficAwareCheck(PROBE_TIMEOUT_S, reads_verdict=False)
    )
    tick: float = TICK_S
    warm: Callable[[str], tuple[str, HealthReport]] = warm_up
    # Load one model of the server again (url, admin key, model), and probe every model after a reload.
    reload: Callable[[str, str, str], None] = reload_model
    probe: Callable[[str], HealthReport] = lambda url: probe_models(url, PROBE_TIMEOUT_S)
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
    # The public API in front of the server (plates gateway): started again if it exits when healing, else its exit
    # ends the watch as a failed server's does.
    gateway: ChildProcess | None = None

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self.restarts = 0
        self.reloads = 0
        self.reloaded: dict[str, float] = {}  # model: when it was last loaded again, time.time()
        self.verdict = STARTING
        self._unwritable: str | None = None
        self._watched: tuple[int | None, frozenset[str]] = (None, frozenset())  # a server's pid, its stubs' models

    def run(self) -> int:
        """Watch until stop() (0), or until the server fails and cannot be healed here (1)."""
        try:
            return self._run()
        finally:
            remove_verdict(self.server.url)

    def _run(self) -> int:
        while not self.stopping.is_set():
            failure = self._watch()
            if failure is None:
                return 0
            self.log(f"supervisor: {failure.reason}")
            if failure.models and self.reload_models(failure):
                continue
            if self.stopping.is_set():  # a reload cut short by the stop: nothing failed
                return 0
            self.server.kill()
            if not self.heal:
                if self.gateway is not None:
                    self.gateway.kill()
                self.log("supervisor: server killed; exiting for a fresh start")
                return 1
            self.restarts += 1
            self.log(f"supervisor: restarting Triton (restart {self.restarts})")
            self.publish(HealthReport((ModelHealth("tritonserver", False, f"restarting: {failure.reason}", 0.0),)))
            try:
                self.server.start(wait_until_ready=True, timeout=READY_TIMEOUT_S)
            except ServerUnavailableError as error:
                self.log(f"supervisor: the restarted server did not become ready: {error}")
                return 1
            self.warm_up()
            self.log(f"supervisor: Triton is ready again at {self.server.url}")
        return 0

    def reload_models(self, failure: Failure) -> bool:
        """Load `failure`'s models again, the verdict saying they reload meanwhile, then probe every model: whether
        they all answer."""
        models = in_reload_order(failure.models)
        self.publish(HealthReport(tuple(ModelHealth(m, False, f"{RELOADING}: {failure.reason}", 0.0) for m in models)))
        started = time.monotonic()
        for model in models:
            self.log(f"supervisor: reloading {model}")
            try:
                self.reload(self.server.url, self.server.admin_key, model)
            except PlatesError as error:
                self.log(f"supervisor: reloading {model} failed: {error}")
                return False
        report = self.probe(self.server.url)
        self.log(
            f"supervisor: reloaded {', '.join(models)} in {time.monotonic() - started:.1f} s; then {report.summary()}"
        )
        if not report.healthy:
            return False
        self.reloads += 1
        self.reloaded.update(dict.fromkeys(models, time.time()))
        self.publish(report)
        for stub in failure.dead:
            if stub.is_running():  # a zombie: gone, had Triton reaped it when it unloaded its model
                self.log(
                    f"supervisor: Triton keeps the dead stub (pid {stub.pid}) unreaped until it stops: Triton "
                    "2.51 never finishes unloading a version whose stub died holding a request"
                )
        return True

    def warm_up(self) -> None:
        """Warm the server that has just become ready (plates.server.warmup), the verdict saying it is starting
        meanwhile; the warm-up's probes are its first check, so the next comes an interval later rather than at
        once, when it would meet the first clients."""
        self.publish(STARTING)
        said, report = self.warm(self.server.url)
        self.log(f"supervisor: {said}")
        self.publish(report)

    def _watch(self) -> Failure | None:
        """None once stop() is called; else why the watch must stop."""
        self.publish(self.verdict)  # the warm-up's or the reload's report, or why this server is not checked yet
        running = [] if self.server.pid is None else stubs(self.server.pid)
        if self._watched[0] != self.server.pid:  # a server just started: the models with a stub now should have one
            self._watched = (self.server.pid, frozenset(model for model, _ in running))
        if running:  # none where the server's processes cannot be seen: the HTTP checks still watch
            self.log(f"supervisor: watching the stubs of {', '.join(sorted(model for model, _ in running))}")
        gone = self._watched[1] - {model for model, _ in running}
        if gone and self.server.alive:  # died while another model reloaded
            return Failure(f"the stub of {', '.join(sorted(gone))} is gone", in_reload_order(gone))
        # The HTTP check runs in a thread of its own, so that its probes, which may wait seconds at a loaded server,
        # never delay the look at the stubs; nor the kill: an unfinished check is left to fail against no server.
        checks = ThreadPoolExecutor(1, thread_name_prefix="health-check")
        try:
            return self._watch_loop(running, checks)
        finally:
            checks.shutdown(wait=False, cancel_futures=True)

    def _watch_loop(self, watched: list[tuple[str, psutil.Process]], checks: ThreadPoolExecutor) -> Failure | None:
        failed = 0
        check: Future | None = None
        next_check = time.monotonic() + self.interval  # the warm-up's or the reload's probes were the last check
        while not self.stopping.wait(self.tick):
            if self.gateway is not None and not self.gateway.alive:
                gone = f"the gateway exited with code {self.gateway.returncode}"
                if not self.heal:
                    return Failure(gone)
                self.log(f"supervisor: {gone}; starting it again")
                self.gateway.start()
            if not self.server.alive:
                return Failure("tritonserver exited")
            dead = [(model, stub) for model, stub in watched if exited(stub)]
            if dead:
                return Failure(
                    "; ".join(f"the stub of {model} (pid {stub.pid}) exited" for model, stub in dead),
                    in_reload_order({model for model, _ in dead}),
                    tuple(stub for _, stub in dead),
                )
            if check is None and time.monotonic() >= next_check:
                check = checks.submit(self.check, self.server.url)
            if check is not None and check.done():
                report, check, next_check = check.result(), None, time.monotonic() + self.interval
                self.verdict = report
                failed = 0 if report.healthy else failed + 1
                if not report.healthy:
                    self.log(f"supervisor: health check {failed}/{self.failures} failed: {report.summary()}")
                if failed >= self.failures:
                    reason = f"{', '.join(m.model for m in report.failed)} failed {failed} health checks in a row"
                    return Failure(reason, to_reload(report))
            self.publish(self.verdict)
        return None

    def publish(self, verdict: HealthReport) -> None:
        """Write the verdict for the other callers of plates.client.health. A folder that cannot be written costs
        them the supervisor's evidence (they probe instead), never the watch; it is logged once."""
        self.verdict = verdict
        try:
            write_verdict(self.server.url, verdict, self.reloaded)
            self._unwritable = None
        except OSError as error:
            if self._unwritable != str(error):
                self.log(f"supervisor: cannot write its health verdict: {error}")
            self._unwritable = str(error)

    def stop(self) -> None:
        self.stopping.set()


class CommandServer:
    """A tritonserver command line run as given, plus this project's flags: the server inside the image."""

    def __init__(self, command: list[str], url: str) -> None:
        self.command = command
        self.url = url
        self.admin_key = admin_key()
        self.triton: TritonProcess | None = None

    @property
    def alive(self) -> bool:
        return self.triton is not None and self.triton.alive

    @property
    def pid(self) -> int | None:
        return None if self.triton is None else self.triton.pid

    def start(self, wait_until_ready: bool = True, timeout: float = READY_TIMEOUT_S) -> CommandServer:
        prefix = new_shm_prefix()
        self.triton = TritonProcess([*self.command, *serving_flags(self.admin_key), shm_flag(prefix)], prefix)
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
    # Over the last container's verdict, where its /tmp outlived it (a pod's emptyDir) and a process of this one
    # has its pid.
    supervisor.publish(STARTING)
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
        supervisor.warm_up()
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
