"""The processes of a Triton server that runs on this machine: its stubs, alive or not (the supervisor, the
orchestrator), and their resident memory (`plates bench`'s soak).

The server is the `tritonserver` process listening on the URL's port; each model instance of the Python backend
(and of the local PyTorch stand-in) is one `triton_python_backend_stub` child of it. A server in a container, on
another machine or of another user is not visible: the caller is told so, rather than shown nothing.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import psutil

from plates.readiness import normalize_url


@dataclass(frozen=True)
class ProcessMemory:
    pid: int
    name: str  # "tritonserver", or "stub yolo": the stub named by the model it serves
    rss: int  # bytes


def _is_local(host: str) -> bool:
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0", socket.gethostname())


def _listens_on(process: psutil.Process, port: int) -> bool:
    return any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in process.net_connections("tcp"))


def server_processes(url: str) -> list[psutil.Process]:
    """The server at `url` and its children, or [] where they cannot be seen from here."""
    parts = urlsplit(normalize_url(url))
    if not _is_local(parts.hostname or "") or parts.port is None:
        return []
    for process in psutil.process_iter(["name"]):
        try:
            if process.info["name"] == "tritonserver" and _listens_on(process, parts.port):
                return [process, *process.children(recursive=True)]
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return []


# A stub's first argument is its model file: `<repository>/<model>/<version>/model.py` (model.pt for the stand-in).
MODEL_FILE = re.compile(r"/([^/]+)/[0-9]+/model\.[a-z]+$")


def model_of(process: psutil.Process) -> str | None:
    """The model a stub serves; None for a process that is no stub."""
    command = process.cmdline()
    found = MODEL_FILE.search(command[1]) if len(command) > 1 else None
    return found.group(1) if found else None


def exited(process: psutil.Process) -> bool:
    """Gone, or a zombie that its parent has not reaped yet: either way it serves nothing any more."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def stubs(server_pid: int) -> list[tuple[str, psutil.Process]]:
    """The running stubs of the tritonserver process `server_pid`, each with the model it serves; none where that
    process is gone."""
    try:
        children = psutil.Process(server_pid).children()
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        try:
            model = model_of(child)
            if model is not None and not exited(child):
                found.append((model, child))
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def unreaped(server_pid: int) -> tuple[list[psutil.Process], list[psutil.Process]]:
    """The children of the process `server_pid` (tritonserver's: its stubs), as two lists: those that have exited
    and that it has not reaped (zombies), and the others; both empty where that process is gone."""
    try:
        children = psutil.Process(server_pid).children()
    except psutil.NoSuchProcess:
        return [], []
    dead = [child for child in children if exited(child)]
    return dead, [child for child in children if child not in dead]


def sibling_stubs(model: str) -> list[psutil.Process]:
    """Called in a stub: the running stubs of `model` beside it, under the same tritonserver; none for a model served
    inside tritonserver. A stub killed with -9 stays dead (Triton 2.51 never restarts it) until the supervisor loads
    its model again, which starts new ones."""
    return [process for name, process in stubs(os.getppid()) if name == model]


class SiblingStubs:
    """Called in a stub (the orchestrator's): whether a stub that served a model it calls has exited since. Each
    answer from a model checks the stubs last seen serving it, and looks again once one of them is gone: the
    supervisor's reload starts new stubs, and the requests the dead one's queue still holds are refused after they
    have started. Only a model seen in a stub can have lost it: the real PyTorch backend serves its models inside
    tritonserver, with none."""

    def __init__(self) -> None:
        self.serving: dict[str, list[psutil.Process]] = {}

    def answered(self, model: str) -> None:
        """After `model` answered: look for its stubs the first time, and again after one that served it exited."""
        if model not in self.serving or self.exited(model):
            self.serving[model] = sibling_stubs(model)

    def exited(self, model: str) -> bool:
        return any(exited(process) for process in self.serving.get(model, ()))


def _name(process: psutil.Process) -> str:
    model = model_of(process) if process.name() == "triton_python_backend_stub" else None
    return process.name() if model is None else f"stub {model}"


def memory(processes: list[psutil.Process]) -> dict[int, ProcessMemory]:
    """Each process's resident memory now, by pid; a process that has exited is left out."""
    found = {}
    for process in processes:
        try:
            found[process.pid] = ProcessMemory(process.pid, _name(process), process.memory_info().rss)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def format_growth(before: dict[int, ProcessMemory], after: dict[int, ProcessMemory]) -> str:
    """One line per process, start to end RSS and growth, and the total; a process gone or new is said so."""
    mib = 1024 * 1024
    lines = []
    for pid in sorted(before.keys() | after.keys()):
        start, end = before.get(pid), after.get(pid)
        name = (start or end).name
        if start is None:
            lines.append(f"  {name:<24} pid {pid:>7}: started during the run, RSS {end.rss / mib:.1f} MiB")
        elif end is None:
            lines.append(f"  {name:<24} pid {pid:>7}: exited during the run (RSS {start.rss / mib:.1f} MiB)")
        else:
            lines.append(
                f"  {name:<24} pid {pid:>7}: RSS {start.rss / mib:.1f} -> {end.rss / mib:.1f} MiB "
                f"({(end.rss - start.rss) / start.rss:+.1%})"
            )
    total_before = sum(p.rss for p in before.values())
    total_after = sum(p.rss for p in after.values())
    lines.append(
        f"  {'all':<24} {'':>11}: RSS {total_before / mib:.1f} -> {total_after / mib:.1f} MiB "
        f"({(total_after - total_before) / max(total_before, 1):+.1%})"
    )
    return "\n".join(lines)
