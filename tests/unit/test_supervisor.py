"""The supervisor's decisions, with a fake server and a fake health check: when it kills, restarts or exits."""

from __future__ import annotations

import os
import sys
import time

import psutil

from plates.server.health import HealthReport, ModelHealth
from plates.server.options import ADMIN_HEADER, serving_flags
from plates.server.process import TritonProcess, remove_shm
from plates.server.supervisor import Supervisor

HEALTHY = HealthReport((ModelHealth("yolo", True, "ok", 0.01),))
SICK = HealthReport((ModelHealth("yolo", False, "HTTP 500: Stub process 'yolo_0_0' is not healthy.", 0.01),))


class FakeServer:
    url = "localhost:1"

    def __init__(self):
        self.alive = True
        self.events: list[str] = []

    def start(self, wait_until_ready=True, timeout=0.0):
        self.events.append("start")
        self.alive = True

    def wait_until_ready(self, timeout=0.0):
        pass

    def kill(self):
        self.events.append("kill")
        self.alive = False


def supervise(reports, heal, failures=2):
    """Run a supervisor over `reports` (one per check); it stops when they run out."""
    server, lines = FakeServer(), []
    queue = list(reports)

    def check(url):
        if len(queue) == 1:
            supervisor.stop()
        return queue.pop(0)

    supervisor = Supervisor(server, heal=heal, interval=0.001, failures=failures, check=check, log=lines.append)
    return supervisor.run(), server.events, lines


def test_one_failed_check_is_not_enough():
    code, events, _ = supervise([HEALTHY, SICK, HEALTHY, SICK, HEALTHY], heal=True)
    assert code == 0 and events == []


def test_failures_in_a_row_restart_the_server_when_healing():
    code, events, lines = supervise([SICK, SICK, HEALTHY, HEALTHY], heal=True)
    assert code == 0 and events == ["kill", "start"]
    assert "supervisor: yolo failed 2 health checks in a row" in lines
    assert "supervisor: restarting Triton (restart 1)" in lines


def test_failures_in_a_row_kill_and_exit_when_not_healing():
    code, events, lines = supervise([SICK, SICK, HEALTHY], heal=False)
    assert code == 1 and events == ["kill"]
    assert lines[-1] == "supervisor: server killed; exiting for a fresh start"


def test_a_server_that_exited_is_restarted():
    server, lines = FakeServer(), []
    server.alive = False
    supervisor = Supervisor(server, heal=True, interval=0.001, check=lambda url: supervisor.stop() or HEALTHY,
                            log=lines.append)  # fmt: skip
    assert supervisor.run() == 0
    assert server.events == ["kill", "start"] and "supervisor: tritonserver exited" in lines


def alive(pid: int) -> bool:
    """Not gone, nor a zombie waiting for its new parent to reap it."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
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
    monkeypatch.setattr("plates.server.process.SHM", tmp_path)
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


def test_serving_flags_close_the_admin_apis_with_the_key_and_size_shared_memory(monkeypatch):
    monkeypatch.setenv("PLATES_ADMIN_KEY", "from-the-secret")
    flags = serving_flags()
    assert f"--http-restricted-api=model-repository,shared-memory,trace,logging:{ADMIN_HEADER}=from-the-secret" in flags
    assert any(f.startswith("--grpc-restricted-protocol=") and f.endswith("=from-the-secret") for f in flags)
    assert "--backend-config=python,shm-growth-byte-size=67108864" in flags
    monkeypatch.delenv("PLATES_ADMIN_KEY")
    assert serving_flags()[0] != serving_flags()[0], "without a key, a random one nobody knows"


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
    supervisor = Supervisor(server, heal=True, interval=0.001, check=lambda url: supervisor.stop() or HEALTHY,
                            log=lines.append, gateway=gateway)  # fmt: skip
    assert supervisor.run() == 0
    assert gateway.events == ["start"] and server.events == []
    assert "supervisor: the gateway exited with code 78; starting it again" in lines


def test_a_gateway_that_exited_ends_the_container_with_its_server_when_not_healing():
    server, gateway, lines = FakeServer(), FakeGateway(), []
    supervisor = Supervisor(server, heal=False, interval=0.001, check=lambda url: HEALTHY, log=lines.append,
                            gateway=gateway)  # fmt: skip
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
