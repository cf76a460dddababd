"""A PostgreSQL server of the tests' own (Debian's package, the README's prerequisites) on 127.0.0.1 and a free port,
in a folder of its own: the store's tests run on it as on SQLite, and the fault tests stop and start it.

initdb and pg_ctl refuse to run as root, and CI runs as root: there they run as `nobody` through runuser, in a
folder that user owns."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from plates.server.launcher import free_port

USER = "plates"


def _binary(name: str) -> str:
    # Debian keeps the server's programs out of PATH, under its major version.
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise RuntimeError(
            f"{name} not found: install PostgreSQL as the README's prerequisites say (apt-get install postgresql)"
        )
    return found


class Postgres:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="plates-postgres-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.folder, "nobody", "nogroup")
        self._run(_binary("initdb"), "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def new_database(self) -> str:
        """The URL of a database of its own on this server, for one test."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={USER} dbname=postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{name}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "nobody", "--"] if self.as_root else []
        result = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120)
        if result.returncode:
            raise RuntimeError(f"{command[0]} failed: {result.stdout}{result.stderr}")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "start")
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not listen within 30 s: {self.log()}") from None
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def log(self) -> str:
        path = self.folder / "log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def remove(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass  # not running
        shutil.rmtree(self.folder, ignore_errors=True)
