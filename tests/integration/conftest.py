"""Integration tests start real servers and processes: one Triton server per test session (started with the launcher
users run, or given with --triton-url), gateways in front of it, and trees of processes shaped as tritonserver's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from plates.build.paths import DEFAULT_REPOSITORY
from plates.build.repository import is_built, rebuild
from plates.client.readiness import normalize_url, wait_for_server
from plates.evaluation.timing import model_statistics
from plates.inference.stubs import stubs
from plates.server.launcher import LocalServer, free_port
from plates.server.options import ADMIN_KEY_VARIABLE

from .gateways import KEY, running_gateway, wait_until_ready
from .postgres import Postgres

# The admin header's value of the server under test: the local one is started with it, and scripts/test-image.sh
# starts the container with the same variable.
ADMIN_KEY = os.environ.setdefault(ADMIN_KEY_VARIABLE, "plates-integration-tests")

SLEEP = "import time; time.sleep(120)"
# A parent that never reaps its children, as tritonserver does not at once: a stub killed with -9 stays a zombie.
PARENT = "import subprocess, sys, time; [subprocess.Popen([sys.executable, p]) for p in sys.argv[1:]]; time.sleep(120)"


@pytest.fixture(scope="session")
def triton_endpoints(request, tmp_path_factory) -> tuple[str, str]:
    """The HTTP and gRPC endpoints (host:port) of the server under test."""
    given = request.config.getoption("--triton-url")
    if given:
        wait_for_server(given, timeout=60)
        yield given, request.config.getoption("--triton-grpc-url") or grpc_beside(given)
        return
    if not is_built(DEFAULT_REPOSITORY):
        rebuild(DEFAULT_REPOSITORY)
    log = Path(tmp_path_factory.mktemp("triton")) / "tritonserver.log"
    server = LocalServer(http_port=free_port(), grpc_port=free_port(), metrics_port=free_port(), log_file=log)
    try:
        server.start(timeout=300)
    except Exception:
        print(log.read_text()[-5000:])
        raise
    yield server.url, f"127.0.0.1:{server.grpc_port}"
    server.stop()


def grpc_beside(http_url: str) -> str:
    """Triton's gRPC endpoint where only its HTTP one is given: the next port, as in Triton's 8000 and 8001."""
    host, _, port = normalize_url(http_url).split("://", 1)[1].rpartition(":")
    return f"{host}:{int(port) + 1}"


@pytest.fixture(scope="session")
def triton_url(triton_endpoints) -> str:
    return triton_endpoints[0]


@pytest.fixture(scope="session")
def triton_grpc_url(triton_endpoints) -> str:
    return triton_endpoints[1]


@pytest.fixture(scope="session")
def http_client(triton_url):
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(normalize_url(triton_url).split("://", 1)[1])
    yield client
    client.close()


def inference_count(triton_url: str, model: str) -> int:
    """How many inferences `model` has executed, from Triton's statistics endpoint."""
    stats = model_statistics(triton_url, model)["model_stats"]
    return sum(int(entry.get("inference_count", 0)) for entry in stats)


@pytest.fixture(scope="module")
def keyed_gateway(request, triton_url, triton_grpc_url, tmp_path_factory):
    """The URL of a gateway that asks for the key KEY, in front of the server under test: the one --gateway-url
    names, or one started for the module."""
    given = request.config.getoption("--gateway-url")
    if given:
        wait_until_ready(normalize_url(given))
        yield normalize_url(given)
        return
    folder = tmp_path_factory.mktemp("gateway")
    # With a store, so that its history's routes are served, and tested (schemathesis, the page in Chromium).
    store = {
        "STORE": str(folder / "site.db"),
        "STORE_CROPS": str(folder / "crops"),
        "CAMERA_ROLES": "page-in=entrance,page-out=exit",
    }
    with running_gateway(triton_url, triton_grpc_url, folder / "gateway.log", KEYS=KEY, **store) as url:
        yield url


@pytest.fixture
def stub_tree(tmp_path) -> Callable[..., subprocess.Popen]:
    """stub_tree("yolo", "stn") starts a process with one child per model, run on `<repository>/<model>/1/model.py`
    as Triton's stubs are, and returns it once every child runs; all of them are killed after the test."""
    started = []

    def start(*models: str) -> subprocess.Popen:
        files = []
        for model in models:
            path = tmp_path / "repository" / model / "1" / "model.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SLEEP)
            files.append(str(path))
        parent = subprocess.Popen([sys.executable, "-c", PARENT, *files], start_new_session=True)
        started.append(parent)
        deadline = time.monotonic() + 30  # three interpreters to start on a busy machine
        while len(stubs(parent.pid)) < len(models):
            assert time.monotonic() < deadline, "the fake stubs did not start"
            time.sleep(0.05)
        return parent

    yield start
    for parent in started:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every test under this folder is an integration test, so `-m "not integration"` leaves the unit suite.
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of the module's own (postgres.py)."""
    server = Postgres()
    server.start()
    yield server
    server.remove()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A store's URL on each database the store runs on: a SQLite file, and a fresh database of `postgres`."""
    if request.param == "sqlite":
        return str(tmp_path / "site.db")
    return request.getfixturevalue("postgres").new_database()
