"""Candidate model repositories served beside the project's: a copy of a repository, changed (other weights, other
settings), started on free ports and warmed up as the supervisor warms a server. What every comparison of detectors,
recognizers or settings (benchmarks/) and the GPU check serve."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from plates.build.paths import DEFAULT_REPOSITORY
from plates.inference.tensor_log import LOG_VARIABLE
from plates.server.launcher import LocalServer, free_port
from plates.server.warmup import warm_up

START_TIMEOUT_S = 300.0


def copy_repository(target: Path, leave_out: Iterable[str] = (), source: Path = DEFAULT_REPOSITORY) -> Path:
    """`source` copied to `target`, its committed and built files but those the glob patterns `leave_out` name: a
    candidate to change, then serve."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", *leave_out))
    return target


@contextmanager
def serving(
    repository: Path,
    log_file: Path | None = None,
    tensor_log: Path | None = None,
    pytriton: Path | None = None,
    timeout: float = START_TIMEOUT_S,
) -> Iterator[LocalServer]:
    """Triton on `repository` on free ports, warmed, its models counting where tensors lie into `tensor_log` where
    given (plates.inference.tensor_log); stopped after, which has each model write its counts. `pytriton`: another
    Triton than the installed wheel's (plates.server.launcher)."""
    if tensor_log is not None:
        tensor_log.mkdir(parents=True, exist_ok=True)
        os.environ[LOG_VARIABLE] = str(tensor_log)
    server = LocalServer(repository, free_port(), free_port(), free_port(), log_file=log_file, pytriton=pytriton)
    try:
        server.start(timeout=timeout)
        warm_up(server.url)
        yield server
    finally:
        server.stop()
        os.environ.pop(LOG_VARIABLE, None)
