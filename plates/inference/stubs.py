"""The model processes of a Triton server on this machine: each Python model instance (and each of the local
PyTorch stand-in's) is one `triton_python_backend_stub` child of the `tritonserver` process, named by its model file.

The orchestrator asks whether a model it calls has lost its process (SiblingStubs: a dead model, not a busy one);
the supervisor which stubs are alive; a stopping server which have exited unreaped.
"""

from __future__ import annotations

import os
import re

import psutil

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
