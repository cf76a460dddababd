"""One `tritonserver` process and everything it leaves behind: its Python stubs and their shared memory.

Triton 2.51's Python backend keeps each model instance's tensors in a file in /dev/shm named by a prefix; a stub
killed with -9 leaves its file there, and so does a server killed before it could unload. Every server started here
gets its own prefix, so that stopping it removes exactly its files and never another server's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from plates.inference.stubs import unreaped

SHM = Path("/dev/shm")
# Triton's own default: how long it lets in-flight requests finish on SIGTERM.
EXIT_TIMEOUT_S = 30
STOP_POLL_S = 0.1


def new_shm_prefix() -> str:
    return f"plates_{uuid.uuid4().hex[:12]}_"


def shm_flag(prefix: str) -> str:
    return f"--backend-config=python,shm-region-prefix-name={prefix}"


class ChildProcess:
    """Start, stop and kill one command; it runs in a process group of its own with whatever it starts, and a
    reaper (plates.server.reaper) kills that group if this process dies without doing so."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None, log_file=None):
        self.command = command
        self.env = env
        self.log_file = log_file
        self.process: subprocess.Popen | None = None
        self._reaper: subprocess.Popen | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def start(self) -> ChildProcess:
        self._retire_reaper()  # of the process started before, which has exited
        output = Path(self.log_file).open("ab") if self.log_file else None
        self.process = subprocess.Popen(
            self.command,
            env=self.env,
            stdout=output,
            stderr=subprocess.STDOUT if output else None,
            start_new_session=True,
        )
        self._reaper = subprocess.Popen(
            [sys.executable, "-m", "plates.server.reaper", str(self.process.pid), *self.leftovers()],
            stdin=subprocess.PIPE,
            start_new_session=True,
        )
        return self

    def leftovers(self) -> list[str]:
        """What the reaper removes beside the group: nothing here."""
        return []

    def signal_stop(self) -> None:
        """SIGTERM: the process finishes what is in flight and exits by itself."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = EXIT_TIMEOUT_S + 10) -> int | None:
        """SIGTERM, then wait for it to drain; kill the group only if it outstays its own exit timeout."""
        self.signal_stop()
        return self.finish(timeout)

    def finish(self, timeout: float) -> int | None:
        """Wait up to `timeout` s for a process told to stop, then kill what is left."""
        if self.alive:
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        return self.kill()

    def kill(self) -> int | None:
        """SIGKILL the process and its group at once (what is left of them after stop())."""
        if self.process is None:
            return None
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group is gone: the process exited and took its children with it
        self.process.wait()
        self._retire_reaper()
        return self.process.returncode

    def _retire_reaper(self) -> None:
        """Stop the reaper of a group that is gone. Killed, not woken: woken, it would kill the group and remove its
        files again, by a process group id that is free by then."""
        if self._reaper is not None:
            self._reaper.kill()
            self._reaper.wait()
            self._reaper.stdin.close()
            self._reaper = None


class TritonProcess(ChildProcess):
    """One server command with its stubs, whose shared-memory files go with them.

    Triton 2.51 never finishes unloading a model version whose stub was killed while it held a request: the request's
    response factory, which the stub would have freed, keeps the version alive, and Triton never reaps that stub
    (docs/health.md). A stop would wait its whole exit timeout for such a version, then exit 1. So where a dead stub
    is among Triton's children when the stop begins, the stop is done once every other stub has exited (each exits
    when its model has unloaded, its requests in flight answered): the server is killed then, and the stop counts
    as clean.
    """

    def __init__(self, command: list[str], shm_prefix: str, env: dict[str, str] | None = None, log_file=None):
        super().__init__(command, env, log_file)
        self.shm_prefix = shm_prefix

    def leftovers(self) -> list[str]:
        return [self.shm_prefix]

    def finish(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        if self.alive and unreaped(self.pid)[0]:
            while self.alive and time.monotonic() < deadline:
                if not unreaped(self.pid)[1]:
                    self.kill()
                    return 0
                time.sleep(STOP_POLL_S)
        return super().finish(max(0.0, deadline - time.monotonic()))

    def kill(self) -> int | None:
        """SIGKILL the server and its stubs at once, and remove their files."""
        code = super().kill()
        if self.process is not None:
            remove_shm(self.shm_prefix)
        return code


def remove_shm(prefix: str) -> list[Path]:
    removed = []
    for path in SHM.glob(f"{prefix}*"):
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed
