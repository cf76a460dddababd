"""A dead model is noticed and healed, the admin APIs are closed, and nothing is left in /dev/shm: by really killing
stubs with SIGKILL and really calling the APIs, over HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter

import psutil
import pytest

from plates.readiness import normalize_url, wait_for_server
from plates.server.health import deep_check
from plates.server.processes import server_processes
from plates.server.options import ADMIN_HEADER, GRPC_ADMIN_HEADER
from plates.server.launcher import free_port

from .conftest import ADMIN_KEY
from .test_serve_command import wait_for_text

# The goals of a killed stub under 4 clients sending car.jpg without pause (issue 26).
CHECK_FAILS_WITHIN_S = 10
READS_AGAIN_WITHIN_S = 45
MODELS = ("yolo", "plate_recognition", "stn", "lprnet")


def stub_of(url: str, model: str) -> int:
    """The PID of `model`'s stub process: a child of the server started on `<repository>/<model>/1/model.*`."""
    stubs = [p.pid for p in server_processes(url)[1:] if any(f"/{model}/1/model." in a for a in p.cmdline())]
    assert len(stubs) == 1, stubs
    return stubs[0]


def shm_prefix_of(url: str) -> str:
    """The shared-memory prefix of the server at `url`, from its command line (a new one at every restart)."""
    [prefix] = [a.rsplit("=", 1)[1] for a in server_processes(url)[0].cmdline() if "shm-region-prefix-name=" in a]
    return prefix


def test_plates_serve_heals_a_killed_stub_of_every_model_under_four_clients(request, tmp_path, car_load):
    if request.config.getoption("--triton-url"):
        pytest.skip("kills the stubs of the local server `plates serve` starts")
    http = free_port()
    url = f"localhost:{http}"
    ports = ["--http-port", str(http), "--grpc-port", str(free_port()), "--metrics-port", str(free_port()),
             "--gateway-port", str(free_port())]  # fmt: skip
    prefixes = set()  # of each server plates serve starts: other servers on the machine have files there too
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        command = [sys.executable, "-m", "plates.cli.main", "serve", *ports]
        serve = subprocess.Popen(command, stdout=output, stderr=output)
    try:
        wait_for_server(url, timeout=300, alive=lambda: serve.poll() is None)
        wait_for_text(log, "Triton is ready", serve, timeout=30)
        load = car_load(url, clients=4)

        def tail() -> str:
            return log.read_text()[-3000:]

        for restart, model in enumerate(MODELS, start=1):
            load.first_right_since(time.monotonic(), READS_AGAIN_WITHIN_S, tail)
            deadline = time.monotonic() + 30
            while not (report := deep_check(url, timeout=5)).healthy:  # the restarted server's first check
                assert time.monotonic() < deadline, report.summary()
                time.sleep(0.5)
            prefixes.add(shm_prefix_of(url))
            os.kill(stub_of(url, model), signal.SIGKILL)
            killed = time.monotonic()
            while deep_check(url, timeout=5).healthy:
                assert time.monotonic() - killed < CHECK_FAILS_WITHIN_S, f"{model}: still healthy"
                time.sleep(0.5)
            failed = time.monotonic() - killed
            healed = load.first_right_since(killed, READS_AGAIN_WITHIN_S, tail) - killed
            answers = load.since(killed)
            meanwhile = [a for a in answers if a.sent < killed + healed]
            print(f"{model}: check failed {failed:.1f} s after the kill, car.jpg read right {healed:.1f} s after; "
                  f"meanwhile {dict(Counter(a.kind for a in meanwhile))}: "
                  f"{set(a.message[:200] for a in meanwhile if a.kind != 'no server')}")  # fmt: skip
            assert f"supervisor: restarting Triton (restart {restart})" in log.read_text()
            # What the service said of the dead model: that it restarts, never that it is busy.
            about_it = [a for a in answers if f"model '{model}'" in a.message]
            assert all(a.kind == "restarting" for a in about_it), Counter((a.kind, a.message) for a in about_it)
        load.stop()
        prefixes.add(shm_prefix_of(url))  # the server of the last restart
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    assert serve.returncode == 0
    assert len(prefixes) == len(MODELS) + 1
    left = [name for name in os.listdir("/dev/shm") if name.startswith(tuple(prefixes))]
    assert left == [], "the service left shared memory behind"


def admin_call(url: str, key: str | None) -> int:
    request = urllib.request.Request(f"{normalize_url(url)}/v2/repository/index", data=b"{}", method="POST")
    if key is not None:
        request.add_header(ADMIN_HEADER, key)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_model_repository_api_answers_only_the_admin_key(triton_url):
    assert admin_call(triton_url, None) == 403
    assert admin_call(triton_url, "wrong") == 403
    assert admin_call(triton_url, ADMIN_KEY) == 200


def test_model_repository_api_over_grpc_answers_only_the_admin_key_as_tritonclient_sends_it(triton_grpc_url):
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    client = grpcclient.InferenceServerClient(triton_grpc_url)
    try:
        for headers in (None, {GRPC_ADMIN_HEADER: "wrong"}, {ADMIN_HEADER: ADMIN_KEY}):
            with pytest.raises(InferenceServerException, match=f"expecting header '{GRPC_ADMIN_HEADER}'"):
                client.get_model_repository_index(headers=headers)
        index = client.get_model_repository_index(headers={GRPC_ADMIN_HEADER: ADMIN_KEY})
        assert {model.name for model in index.models} >= set(MODELS)
    finally:
        client.close()


@pytest.mark.parametrize("path", ["/v2/logging", "/v2/trace/setting", "/v2/systemsharedmemory/status"])
def test_logging_trace_and_shared_memory_apis_are_closed_without_the_key(triton_url, path):
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{normalize_url(triton_url)}{path}", timeout=10)
    assert error.value.code == 403


def test_the_deep_check_passes_on_a_healthy_server(triton_url):
    report = deep_check(triton_url)
    assert report.healthy, report.summary()


def test_local_server_listens_on_loopback_only(request, triton_url):
    if request.config.getoption("--triton-url"):
        pytest.skip("the local launcher's address")
    port = int(triton_url.rsplit(":", 1)[1])
    # psutil reads the kernel's socket tables itself: `ss` (iproute2) is not on every machine.
    sockets = psutil.net_connections("tcp")
    listening = [c.laddr for c in sockets if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
    assert listening and all(address.ip == "127.0.0.1" for address in listening), listening
