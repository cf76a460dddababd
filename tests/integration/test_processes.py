import os
import signal
import subprocess
import sys
import time

import psutil

from plates.inference.stubs import SiblingStubs, exited, sibling_stubs, stubs
from plates.server.process_memory import ProcessMemory, format_growth, server_processes

MIB = 1024 * 1024


def test_growth_is_given_per_process_and_in_all_with_gone_and_new_ones_named():
    before = {1: ProcessMemory(1, "tritonserver", 100 * MIB), 2: ProcessMemory(2, "stub yolo", 300 * MIB)}
    after = {1: ProcessMemory(1, "tritonserver", 104 * MIB), 3: ProcessMemory(3, "stub yolo", 310 * MIB)}
    lines = format_growth(before, after).splitlines()
    assert "tritonserver" in lines[0] and "RSS 100.0 -> 104.0 MiB (+4.0%)" in lines[0]
    assert "exited during the run (RSS 300.0 MiB)" in lines[1]
    assert "started during the run, RSS 310.0 MiB" in lines[2]
    assert lines[3].split()[0] == "all" and "RSS 400.0 -> 414.0 MiB (+3.5%)" in lines[3]


def test_a_server_on_another_machine_has_no_visible_processes():
    assert server_processes("http://triton.example:8000") == []


def stub_pid(server_pid: int, model: str) -> int:
    [pid] = [process.pid for name, process in stubs(server_pid) if name == model]
    return pid


def test_stubs_are_the_servers_children_named_by_their_model_file_and_a_killed_one_is_gone(stub_tree):
    server = stub_tree("yolo", "stn")
    found = stubs(server.pid)
    assert sorted(model for model, _ in found) == ["stn", "yolo"]
    yolo = stub_pid(server.pid, "yolo")
    os.kill(yolo, signal.SIGKILL)
    [process] = [process for model, process in found if model == "yolo"]
    deadline = time.monotonic() + 10  # SIGKILL lands when the kernel next schedules the process
    while not exited(process):
        assert time.monotonic() < deadline, "a killed stub still counts as running"
        time.sleep(0.05)
    # Its parent has not reaped it: a zombie, which serves nothing.
    assert psutil.Process(yolo).status() == psutil.STATUS_ZOMBIE
    assert [model for model, _ in stubs(server.pid)] == ["stn"]


def test_a_stub_sees_the_running_stubs_of_a_sibling_model(stub_tree, monkeypatch):
    server = stub_tree("yolo", "stn")
    monkeypatch.setattr(os, "getppid", lambda: server.pid)  # as if called in one of its stubs
    assert [process.pid for process in sibling_stubs("stn")] == [stub_pid(server.pid, "stn")]
    os.kill(stub_pid(server.pid, "stn"), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while sibling_stubs("stn"):
        assert time.monotonic() < deadline, "a killed sibling still counts as running"
        time.sleep(0.05)
    assert [name for name, _ in stubs(server.pid)] == ["yolo"]
    assert sibling_stubs("lprnet") == [], "a model with no stub at all"


def test_only_a_model_once_seen_in_a_stub_can_have_lost_it(stub_tree, monkeypatch):
    server = stub_tree("yolo", "stn")
    monkeypatch.setattr(os, "getppid", lambda: server.pid)
    siblings = SiblingStubs()
    for model in ("stn", "lprnet"):  # lprnet answers from inside tritonserver (the real PyTorch backend)
        siblings.answered(model)
    os.kill(stub_pid(server.pid, "stn"), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not siblings.exited("stn"):
        assert time.monotonic() < deadline, "a killed stub still counts as running"
        time.sleep(0.05)
    assert not siblings.exited("lprnet")


def test_a_dead_stub_counts_as_exited_after_the_next_one_starts_until_the_model_answers_again(stub_tree, monkeypatch):
    # The requests a dead stub's queue holds are refused after the supervisor has started the next stub: those
    # refusals are still the reload's, not a busy model's.
    server = stub_tree("stn")
    monkeypatch.setattr(os, "getppid", lambda: server.pid)
    siblings = SiblingStubs()
    siblings.answered("stn")
    os.kill(stub_pid(server.pid, "stn"), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while sibling_stubs("stn"):
        assert time.monotonic() < deadline, "a killed stub still counts as running"
        time.sleep(0.05)
    reloaded = stub_tree("stn")  # the next stub of stn
    monkeypatch.setattr(os, "getppid", lambda: reloaded.pid)
    assert sibling_stubs("stn") and siblings.exited("stn")
    siblings.answered("stn")  # the next stub answered: what it refuses from now on is its own
    assert not siblings.exited("stn")


def test_the_stubs_of_a_server_that_is_gone_are_none():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert stubs(process.pid) == []
