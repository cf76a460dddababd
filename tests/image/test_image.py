"""The serving image as built and run hardened: its user, its read-only root, its health check, what it holds, and
a stop with requests in flight (last: it stops the container)."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePosixPath

from readings import CAR_PLATE

from plates.build.paths import PROJECT_ROOT
from plates.build.repository import generated_files
from plates.client.health import deep_check
from plates.client.readiness import is_ready
from plates.client.retry import NO_RETRY
from plates.client.service import PlatesClient
from plates.photos.files import read_image

REPOSITORY = PurePosixPath("/opt/plates/model_repository")
STOP_GRACE_S = 40  # compose's stop_grace_period; tritonserver's --exit-timeout-secs is 30


def test_container_runs_as_uid_1000_on_a_read_only_root(engine, container):
    assert engine("exec", container, "id", "-u").stdout.strip() == "1000"
    assert engine.inspect(container, "{{.HostConfig.ReadonlyRootfs}}") == "true"
    denied = engine("exec", container, "touch", "/opt/plates/model_repository/probe", check=False)
    assert denied.returncode != 0 and "Read-only file system" in denied.stderr, denied


def test_image_health_check_passes(engine, container):
    if engine.command[0] == "podman":
        # Podman schedules health checks through systemd timers, which a container host may lack: run it now.
        assert engine("healthcheck", "run", container, check=False).returncode == 0
        return
    deadline = time.monotonic() + 60
    while (status := engine.inspect(container, "{{.State.Health.Status}}")) != "healthy":
        assert status == "starting" and time.monotonic() < deadline, status
        time.sleep(2)


def test_the_image_refuses_to_publish_the_gateway_without_api_keys(engine, image):
    """Started as compose or a pod would be, but with no key: the gateway would serve anyone on 0.0.0.0."""
    run = engine(
        "run",
        "--rm",
        "--user",
        "1000:1000",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "-e",
        "PLATES_GATEWAY_KEYS=",
        image,
        timeout=120,
        check=False,
    )
    assert run.returncode == 78, run
    assert "the gateway cannot start: refusing to listen on 0.0.0.0 without API keys" in run.stderr, run.stderr


def files_under(engine, image: str, folder: str) -> set[str]:
    found = engine("run", "--rm", "--user", "root", "--entrypoint", "find", image, folder, "-type", "f", timeout=300)
    return set(found.stdout.split())


def test_image_holds_the_model_repository_and_nothing_of_the_workspace(engine, image):
    tracked = subprocess.run(
        ["git", "ls-files", "model_repository"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    generated = [str(path.relative_to(PROJECT_ROOT)) for path in generated_files(PROJECT_ROOT / "model_repository")]
    expected = {f"/opt/plates/{path}" for path in [*tracked, *generated, "convert/build_model_repository.py"]}
    # No tests, virtual environment, caches, training runs or local stand-in backend: /opt/plates is exactly the
    # repository the build script made, and the recognizer checkpoints it was made from are nowhere. (Ultralytics
    # installs its own tests as a top-level `tests` package: only this project's are looked for.)
    assert files_under(engine, image, "/opt/plates") == expected
    checkpoints = engine(
        "run",
        "--rm",
        "--user",
        "root",
        "--entrypoint",
        "find",
        image,
        "/",
        "-xdev",
        "(",
        "-name",
        "stn.pth",
        "-o",
        "-name",
        "lprnet.pth",
        "-o",
        "-name",
        ".venv",
        "-o",
        "-path",
        "/root/.cache/*",
        "-o",
        "-path",
        "*/tests/integration",
        "-o",
        "-name",
        "runs",
        "-path",
        "/opt/*",
        ")",
        "-print",
        timeout=300,
    ).stdout.split()
    assert checkpoints == []


# Run inside the container with its own shell (no procps there); "yol[o]" keeps the shell from matching itself.
KILL_YOLO_STUB = (
    'for p in /proc/[0-9]*; do if tr "\\0" " " < "$p/cmdline" 2>/dev/null | grep -q "/yol[o]/1/model.py"; '
    'then kill -9 "${p#/proc/}"; fi; done'
)


def test_a_killed_stub_under_four_clients_is_reloaded_in_the_same_container(engine, container, url, car_load):
    restarts = int(engine.inspect(container, "{{.RestartCount}}"))
    started = engine.inspect(container, "{{.State.StartedAt}}")
    load = car_load(url, clients=4)

    def logs() -> str:
        return engine("logs", "--tail", "30", container).stderr

    load.first_right_since(time.monotonic(), 60, logs)
    killed = time.monotonic()  # before the exec, which takes a while to start: the times below are upper bounds
    engine("exec", container, "sh", "-c", KILL_YOLO_STUB)
    healed = load.first_right_since(killed, 60, logs).answered - killed
    print(f"yolo in the container: car.jpg read right {healed:.1f} s after the kill")
    # The supervisor loaded yolo again: the container, its Triton and the clients' connections stayed.
    deadline = time.monotonic() + 30  # it says so once the reloaded model has answered its probe
    while "supervisor: reloaded yolo in " not in engine("logs", container).stderr:
        assert time.monotonic() < deadline, logs()
        time.sleep(0.5)
    assert int(engine.inspect(container, "{{.RestartCount}}")) == restarts
    assert engine.inspect(container, "{{.State.StartedAt}}") == started
    about_yolo = [a for a in load.since(killed) if "model 'yolo'" in a.message]
    assert all(a.kind == "reloading" for a in about_yolo), Counter((a.kind, a.message) for a in about_yolo)
    assert deep_check(url, timeout=5).healthy


def test_stop_lets_requests_in_flight_finish_and_exits_zero(engine, container, url, samples):
    image = read_image(samples / "car.jpg")

    def recognize() -> list[str]:
        with PlatesClient(url, timeout=STOP_GRACE_S, retry=NO_RETRY) as client:
            return [plate.text for plate in client.recognize(image)]

    # One served and one waiting: plate_recognition's queue (2) holds them without refusing, even with the
    # supervisor's health check in it. A refusal would fail the test, not be retried into a server that stops.
    with ThreadPoolExecutor(2) as pool:
        in_flight = [pool.submit(recognize) for _ in range(2)]
        time.sleep(0.3)  # sent: the server holds them when the stop arrives
        started = time.monotonic()
        engine("stop", "-t", str(STOP_GRACE_S), container, timeout=STOP_GRACE_S + 30)
        stopped_s = time.monotonic() - started
        readings = [future.result() for future in in_flight]
    assert all(CAR_PLATE in texts for texts in readings), readings
    assert engine.inspect(container, "{{.State.ExitCode}}") == "0"
    assert stopped_s < STOP_GRACE_S, f"stop took {stopped_s:.0f} s: the engine killed the server"
    assert not is_ready(url)
