"""The processes of a Triton server on this machine and their resident memory (`plates bench`'s soak).

The server is the `tritonserver` process listening on the URL's port, with its stubs (plates.inference.stubs). A
server in a container, on another machine or of another user is not visible: the caller is told so, rather than shown
nothing.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import psutil

from plates.client.readiness import normalize_url
from plates.inference.stubs import model_of


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
        elif start.rss == 0:  # read as 0 while it started or was torn down (a stub killed under load): no growth
            lines.append(
                f"  {name:<24} pid {pid:>7}: RSS unreadable at the start (0 B), {end.rss / mib:.1f} MiB at the end"
            )
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
