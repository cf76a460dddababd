"""The supervisor's decisions, with a fake server and a fake health check: when it reloads a model, kills, restarts
or exits, and the verdict it leaves for the other callers of the check."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from plates.client.health import HealthReport, ModelHealth, deep_check, read_verdict, reloading, verdict_path
from plates.exceptions import ModelLoadError
from plates.inference.stubs import stubs
from plates.server.child_process import SHM, ChildProcess, TritonProcess, remove_shm
from plates.server.launcher import LocalServer
from plates.server.options import ADMIN_HEADER, admin_key, serving_flags
from plates.server.supervisor import Supervisor, to_reload

HEALTHY = HealthReport((ModelHealth("yolo", True, "ok", 0.01),))
SICK = HealthReport((ModelHealth("yolo", False, "HTTP 500: Stub process 'yolo_0_0' is not healthy.", 0.01),))
# What the probes find: plate_recognition's calls yolo, so its failure reloads both; stn's reloads stn.
PROBED = HealthReport(tuple(ModelHealth(m, True, "ok", 0.01) for m in ("plate_recognition", "stn", "lprnet")))
STN_FAILS = HealthReport((ModelHealth("stn", False, "no answer: timed out", 5.0),))
ORCHESTRATOR_FAILS = HealthReport(
    (ModelHealth("plate_recognition", False, "HTTP 500: plate_recognition: model 'yolo' failed: ...", 0.1),)
)


@pytest.fixture(autouse=True)
def verdicts(verdict_dir):
    return verdict_dir


class FakeServer:
    url = "localhost:1"
    admin_key = "the-key"

    def __init__(self, pid=None):
        self.alive = True
        self.pid = pid
        self.events: list[str] = []
        self.verdicts_at_start: list[HealthReport | None] = []

    def start(self, wait_until_ready=True, timeout=0.0):
        self.events.append("start")
        self.verdicts_at_start.append(read_verdict(self.url))
        self.alive = True

    def wait_until_ready(self, timeout=0.0):
        pass

    def kill(self):
        self.events.append("kill")
        self.alive = False


class FakeReload:
    """The model-repository API: each call recorded with the verdict meanwhile; `fails` raise as Triton's refusal."""

    def __init__(self, fails=(), then=lambda: None):
        self.calls: list[tuple[str, str, str]] = []
        self.verdicts: list[HealthReport | None] = []
        self.fails, self.then = fails, then

    def __call__(self, url, key, model):
        self.calls.append((url, key, model))
        self.verdicts.append(read_verdict(url))
        if model in self.fails:
            raise ModelLoadError(f"/v2/repository/models/{model}/load: HTTP 400: failed to load '{model}'")
        self.then()


def supervise(reports, heal, failures=2, reload=None, probe=PROBED, at_check=lambda url: None):
    """Run a supervisor over `reports` (one per check), calling `at_check(url)` at each; it stops when they run
    out."""
    server, lines = FakeServer(), []
    queue = list(reports)

    def check(url):
        at_check(url)
        if len(queue) == 1:
            supervisor.stop()
        return queue.pop(0)

    supervisor = Supervisor(
        server,
        heal=heal,
        interval=0.001,
        failures=failures,
        check=check,
        log=lines.append,
        tick=0.001,
        reload=reload or FakeReload(),
        probe=lambda url: probe,
    )
    return supervisor.run(), server.events, lines


def test_one_failed_check_is_not_enough():
    reload = FakeReload()
    code, events, _ = supervise([HEALTHY, STN_FAILS, HEALTHY, STN_FAILS, HEALTHY], heal=True, reload=reload)
    assert code == 0 and events == [] and reload.calls == []


@pytest.mark.parametrize("heal", [True, False])
def test_failures_in_a_row_reload_the_models_the_failed_probe_called_and_triton_stays(heal):
    reload, said_reloading = FakeReload(), []
    code, events, lines = supervise(
        [ORCHESTRATOR_FAILS, ORCHESTRATOR_FAILS, HEALTHY, HEALTHY],
        heal,
        reload=reload,
        at_check=lambda url: said_reloading.append(reloading(url)),
    )
    assert code == 0 and events == []
    # Healthy again, but what its old versions answer for a while after is still the reload's (health.reloading).
    assert said_reloading[-1] == ["yolo", "plate_recognition"]
    # yolo first: plate_recognition's reload warms it up through yolo.
    assert reload.calls == [("localhost:1", "the-key", "yolo"), ("localhost:1", "the-key", "plate_recognition")]
    why = "plate_recognition failed 2 health checks in a row"
    assert reload.verdicts[0].summary() == f"unhealthy: yolo: reloading: {why}; plate_recognition: reloading: {why}"
    assert reload.verdicts[0].reloading == ["yolo", "plate_recognition"]
    assert any(
        line.startswith("supervisor: reloaded yolo, plate_recognition in ")
        and line.endswith(f"then {PROBED.summary()}")
        for line in lines
    ), lines


def test_a_failed_reload_restarts_the_server_when_healing():
    code, events, lines = supervise([STN_FAILS, STN_FAILS, HEALTHY, HEALTHY], heal=True, reload=FakeReload({"stn"}))
    assert code == 0 and events == ["kill", "start"]
    assert "supervisor: reloading stn failed: /v2/repository/models/stn/load: HTTP 400: failed to load 'stn'" in lines
    assert "supervisor: restarting Triton (restart 1)" in lines


def test_a_failed_reload_kills_the_server_and_exits_when_not_healing():
    code, events, lines = supervise([STN_FAILS, STN_FAILS, HEALTHY], heal=False, reload=FakeReload({"stn"}))
    assert code == 1 and events == ["kill"]
    assert lines[-1] == "supervisor: server killed; exiting for a fresh start"


def test_a_model_that_still_fails_its_probe_after_its_reload_restarts_the_server():
    reload = FakeReload()
    code, events, lines = supervise([STN_FAILS, STN_FAILS, HEALTHY, HEALTHY], heal=True, reload=reload, probe=STN_FAILS)
    assert code == 0 and [call[2] for call in reload.calls] == ["stn"] and events == ["kill", "start"]


def test_failures_that_no_reload_heals_restart_the_server():
    # A failure of the server itself (here a check that names no model's probe) is not a model's to reload.
    reload = FakeReload()
    code, events, lines = supervise([SICK, SICK, HEALTHY, HEALTHY], heal=True, reload=reload)
    assert code == 0 and events == ["kill", "start"] and reload.calls == []
    assert "supervisor: yolo failed 2 health checks in a row" in lines


@pytest.mark.parametrize(
    "report, models",
    [
        (ORCHESTRATOR_FAILS, ("yolo", "plate_recognition")),
        (STN_FAILS, ("stn",)),
        (HealthReport((*STN_FAILS.models, ModelHealth("lprnet", False, "no answer", 5.0))), ("stn", "lprnet")),
        (HealthReport((ModelHealth("tritonserver", False, "starting", 0.0),)), ()),
        (PROBED, ()),
    ],
)
def test_the_models_to_reload_are_those_the_failed_probes_exercised_callees_first(report, models):
    assert to_reload(report) == models


def test_a_server_that_exited_is_restarted():
    server, lines = FakeServer(), []
    server.alive = False
    supervisor = Supervisor(
        server, heal=True, interval=0.001, check=lambda url: supervisor.stop() or HEALTHY, log=lines.append, tick=0.001
    )
    assert supervisor.run() == 0
    assert server.events == ["kill", "start"] and "supervisor: tritonserver exited" in lines


def kill_stub(server_pid: int, model: str) -> int:
    """SIGKILL the stub of `model` under the fake server; its pid."""
    [pid] = [process.pid for name, process in stubs(server_pid) if name == model]
    os.kill(pid, signal.SIGKILL)
    return pid


@contextlib.contextmanager
def running(supervisor: Supervisor) -> Iterator[threading.Thread]:
    """The supervisor watching in a thread, once it has had its first look at the stubs; stopped after."""
    thread = threading.Thread(target=supervisor.run)
    thread.start()
    try:
        time.sleep(0.2)
        yield thread
    finally:
        supervisor.stop()
        thread.join()


def test_a_killed_stub_is_reloaded_at_the_next_tick_while_a_check_hangs_and_triton_stays(stub_tree):
    triton = stub_tree("yolo", "stn")
    server, lines, hanging = FakeServer(pid=triton.pid), [], threading.Event()
    reload = FakeReload(then=lambda: supervisor.stop())
    # Probes that wait on a loaded server: the look at the stubs must not wait for them.
    supervisor = Supervisor(
        server,
        heal=True,
        check=lambda url: hanging.wait(30) or HEALTHY,
        log=lines.append,
        tick=0.05,
        reload=reload,
        probe=lambda url: PROBED,
    )
    try:
        with running(supervisor):
            yolo = kill_stub(triton.pid, "yolo")
            killed = time.monotonic()
            while not reload.calls:
                assert time.monotonic() - killed < 5, lines
                time.sleep(0.01)
    finally:
        hanging.set()
    assert lines[:3] == [
        "supervisor: watching the stubs of stn, yolo",
        f"supervisor: the stub of yolo (pid {yolo}) exited",
        "supervisor: reloading yolo",
    ]
    assert [call[2] for call in reload.calls] == ["yolo"] and server.events == []
    # While yolo reloads, every caller of the check hears it, without a probe of its own.
    [reloading] = reload.verdicts
    assert reloading.summary() == f"unhealthy: yolo: reloading: the stub of yolo (pid {yolo}) exited"
    # This parent, as Triton 2.51 with a stub that died holding a request, never reaps it: the log says so.
    assert any(line.startswith(f"supervisor: Triton keeps the dead stub (pid {yolo}) unreaped") for line in lines)


def test_a_stub_that_died_while_another_model_reloaded_is_reloaded_next(stub_tree):
    triton = stub_tree("yolo", "stn")
    server, lines = FakeServer(pid=triton.pid), []

    def then():
        if len(reload.calls) == 1:  # stn dies while yolo reloads: no watch has its process
            kill_stub(triton.pid, "stn")
            while any(model == "stn" for model, _ in stubs(triton.pid)):
                time.sleep(0.01)
        else:
            supervisor.stop()

    reload = FakeReload(then=then)
    supervisor = Supervisor(
        server,
        heal=True,
        check=lambda url: HEALTHY,
        log=lines.append,
        tick=0.05,
        reload=reload,
        probe=lambda url: PROBED,
    )
    with running(supervisor) as thread:
        kill_stub(triton.pid, "yolo")
        thread.join(timeout=10)
    # No new stub runs here (the reload is a fake): both are gone, and both are loaded again.
    assert [call[2] for call in reload.calls] == ["yolo", "yolo", "stn"]
    assert "supervisor: the stub of stn, yolo is gone" in lines and server.events == []


def test_a_restarted_server_is_warmed_up_before_it_is_called_ready_and_starting_meanwhile():
    server, lines, ready_verdicts = FakeServer(), [], []
    server.alive = False
    warm_report = HealthReport((ModelHealth("yolo", True, "ok", 0.02),))

    def warm(url):
        server.events.append("warm")
        return f"warmed up, while {read_verdict(url).summary()}", warm_report

    def log(line):
        lines.append(line)
        if "ready again" in line:
            ready_verdicts.append(read_verdict(server.url))

    supervisor = Supervisor(
        server,
        heal=True,
        interval=0.001,
        check=lambda url: supervisor.stop() or HEALTHY,
        log=log,
        tick=0.001,
        warm=warm,
    )
    assert supervisor.run() == 0
    assert server.events == ["kill", "start", "warm"]
    assert lines[-2:] == [
        "supervisor: warmed up, while unhealthy: tritonserver: starting",
        f"supervisor: Triton is ready again at {server.url}",
    ]
    # The warm-up's probes are the restarted server's first check: ready for the gateway as soon as it is warm.
    assert ready_verdicts == [warm_report]


def test_the_verdict_is_each_checks_report_and_is_gone_with_the_supervisor():
    server, seen = FakeServer(), []

    def check(url):
        seen.append(deep_check(url))  # what the HEALTHCHECK or the gateway reads meanwhile
        if len(seen) == 3:
            supervisor.stop()
        return [HEALTHY, SICK, HEALTHY][len(seen) - 1]

    supervisor = Supervisor(server, heal=True, interval=0.001, check=check, log=lambda line: None, tick=0.001)
    assert supervisor.run() == 0
    assert [report.summary() for report in seen] == [
        "unhealthy: tritonserver: starting",
        HEALTHY.summary(),
        SICK.summary(),
    ]
    assert not verdict_path(server.url).exists()


def test_a_verdict_whose_supervisor_is_gone_is_none_and_a_stale_healthy_one_is_unhealthy(monkeypatch):
    server = FakeServer()
    Supervisor(server, heal=True).publish(HEALTHY)
    assert read_verdict(server.url) == HEALTHY
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 11)
    assert read_verdict(server.url).summary().startswith("unhealthy: supervisor: its last verdict is 11 s old")
    monkeypatch.setattr(os, "getpid", lambda: 2**22 + 1)  # above any pid Linux gives
    Supervisor(server, heal=True).publish(HEALTHY)
    assert read_verdict(server.url) is None


def alive(pid: int) -> bool:
    """Not gone, nor a zombie waiting for its new parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # the read itself fails (ESRCH) when it goes between open and read
        return False


def group(pgid: int) -> list[int]:
    """The processes of a process group, zombies included, as `pgrep -g` lists them (procps is not on every machine)."""
    members = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid:
                members.append(pid)
        except ProcessLookupError:  # gone since the listing
            pass
    return members


def test_kill_ends_the_whole_process_group_and_removes_its_shared_memory(tmp_path, monkeypatch):
    monkeypatch.setattr("plates.server.child_process.SHM", tmp_path)
    (tmp_path / "plates_abc_region").write_bytes(b"x")
    (tmp_path / "someone_elses_region").write_bytes(b"x")
    # A parent with a child, as tritonserver with its stubs: both must go.
    script = (
        "import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    )
    process = TritonProcess([sys.executable, "-c", script], "plates_abc_")
    process.start()
    deadline = time.monotonic() + 20  # two interpreters to start on a busy machine
    while len(children := group(process.process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(children) == 2
    process.kill()
    assert not process.alive
    deadline = time.monotonic() + 10  # SIGKILL is delivered when the kernel next schedules the process
    while (running := [pid for pid in children if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["someone_elses_region"]
    assert remove_shm("plates_abc_") == []


def test_a_server_and_its_shared_memory_go_when_the_process_that_started_it_is_killed_with_9():
    prefix = f"plates_reaper_test_{os.getpid()}_"
    region = SHM / f"{prefix}region"
    region.write_bytes(b"x")
    # The parent, as `plates serve` is: it starts a server (a process with a child, as tritonserver with its stubs),
    # says the server's pid, and waits to be killed.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from plates.server.child_process import TritonProcess; "
                "grandchild = 'import time; time.sleep(60)'; "
                'script = f\'import subprocess, sys, time; subprocess.Popen([sys.executable, "-c", {grandchild!r}]); '
                "time.sleep(60)'; "
                f"server = TritonProcess([sys.executable, '-c', script], {prefix!r}).start(); "
                "print(server.pid, flush=True); time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    server = None
    try:
        server = int(parent.stdout.readline())
        deadline = time.monotonic() + 20  # two interpreters to start on a busy machine
        while len(members := group(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(members) == 2
        parent.kill()
        deadline = time.monotonic() + 10
        while (running := [pid for pid in members if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running == [] and not region.exists()
    finally:
        parent.kill()
        parent.wait()
        for pid in group(server) if server else []:
            os.kill(pid, signal.SIGKILL)
        region.unlink(missing_ok=True)


# A server that never reaps its stubs nor exits on SIGTERM by itself, as Triton 2.51 waiting on the version of a stub
# that died holding a request: its stop would last the whole exit timeout.
STUCK_SERVER = (
    "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "[subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']) for _ in range(2)]; time.sleep(120)"
)


def test_a_stop_waiting_only_on_dead_stubs_ends_once_every_other_stub_has_exited():
    process = TritonProcess([sys.executable, "-c", STUCK_SERVER], "plates_stuck_test_")
    process.start()
    try:
        deadline = time.monotonic() + 20
        while len(children := psutil.Process(process.pid).children()) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        dead, unloading = children
        os.kill(dead.pid, signal.SIGKILL)  # a stub killed: Triton keeps it unreaped
        while dead.status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.05)
        process.signal_stop()
        # The other stub exits once its model has unloaded.
        threading.Timer(0.5, os.kill, (unloading.pid, signal.SIGKILL)).start()
        started = time.monotonic()
        assert process.finish(timeout=30) == 0
        assert time.monotonic() - started < 10 and not process.alive
    finally:
        process.kill()


def test_a_process_started_again_or_killed_leaves_no_reaper_behind():
    started = []  # the pids of the process, each time it is started

    def reapers() -> int:
        """Reapers of those pids (the session's own servers have theirs too)."""
        commands = []
        for child in psutil.Process().children():
            try:
                commands.append(child.cmdline())
            except (psutil.ZombieProcess, psutil.NoSuchProcess):  # the `pass` started again may be done already
                continue
        return sum(c[2:3] == ["plates.server.reaper"] and c[3] in started for c in commands)

    def settled_reapers() -> int:
        # A reaper just forked shows the parent's command line until its exec: count again until it shows its own.
        deadline = time.monotonic() + 10
        while (count := reapers()) != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        return count

    process = ChildProcess([sys.executable, "-c", "pass"])
    process.start()
    started.append(str(process.pid))
    process.process.wait()  # exits by itself, as a gateway that cannot bind does
    assert settled_reapers() == 1
    process.start()
    started.append(str(process.pid))
    assert settled_reapers() == 1
    time.sleep(0.5)  # the first start's reaper, were it left behind, would still be there
    assert reapers() == 1
    process.kill()
    assert reapers() == 0


def test_serving_flags_control_models_one_by_one_close_the_admin_apis_with_the_key_and_size_shared_memory(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("PLATES_ADMIN_KEY", "from-the-secret")
    flags = serving_flags(admin_key())
    assert f"--http-restricted-api=model-repository,shared-memory,trace,logging:{ADMIN_HEADER}=from-the-secret" in flags
    assert any(f.startswith("--grpc-restricted-protocol=") and f.endswith("=from-the-secret") for f in flags)
    assert "--backend-config=python,shm-growth-byte-size=67108864" in flags
    assert {"--model-control-mode=explicit", "--load-model=*", "--disable-auto-complete-config"} <= set(flags)
    monkeypatch.delenv("PLATES_ADMIN_KEY")
    assert admin_key() != admin_key(), "without a key, a random one nobody knows"
    # The servers keep the one they were started with, for the supervisor's reloads.
    server = LocalServer()
    flags = " ".join(server.command(tmp_path, "p_"))
    assert len(server.admin_key) > 20 and f"{ADMIN_HEADER}={server.admin_key}" in flags
    assert LocalServer(admin_key="given").admin_key == "given"


class FakeGateway:
    def __init__(self):
        self.alive = False
        self.returncode = 78
        self.events: list[str] = []

    def start(self):
        self.events.append("start")
        self.alive = True
        return self

    def kill(self):
        self.events.append("kill")
        self.alive = False


def test_a_gateway_that_exited_is_started_again_when_healing_and_triton_is_left_alone():
    server, gateway, lines = FakeServer(), FakeGateway(), []
    supervisor = Supervisor(
        server,
        heal=True,
        interval=0.001,
        check=lambda url: supervisor.stop() or HEALTHY,
        log=lines.append,
        gateway=gateway,
        tick=0.001,
    )
    assert supervisor.run() == 0
    assert gateway.events == ["start"] and server.events == []
    assert "supervisor: the gateway exited with code 78; starting it again" in lines


def test_a_gateway_that_exited_ends_the_container_with_its_server_when_not_healing():
    server, gateway, lines = FakeServer(), FakeGateway(), []
    supervisor = Supervisor(
        server, heal=False, interval=0.001, check=lambda url: HEALTHY, log=lines.append, gateway=gateway, tick=0.001
    )
    assert supervisor.run() == 1
    assert server.events == ["kill"] and gateway.events == ["kill"]
    assert lines[0] == "supervisor: the gateway exited with code 78"


def test_a_gateway_that_would_refuse_its_settings_stops_the_supervisor_before_triton_starts(
    monkeypatch, capsys, tmp_path
):
    from plates.server.supervisor import main

    monkeypatch.setenv("PLATES_GATEWAY_HOST", "0.0.0.0")
    monkeypatch.delenv("PLATES_GATEWAY_KEYS", raising=False)
    monkeypatch.delenv("PLATES_GATEWAY_KEYS_FILE", raising=False)
    started = tmp_path / "started"
    assert main(["--gateway", "--", "touch", str(started)]) == 78
    assert not started.exists()
    assert "the gateway cannot start: refusing to listen on 0.0.0.0 without API keys" in capsys.readouterr().err
